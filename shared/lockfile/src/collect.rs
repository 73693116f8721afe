//! Helpers every reader shares: merging repeated entries and walking dependency graphs.

use std::collections::HashMap;

use proven_domain::{Dependency, DependencyKind, Origin};

/// Collects dependencies in file order, merging repeats of the same package, version and
/// origin (npm installs one version at several paths; Gemfile.lock lists one version once per
/// platform). A merged entry is direct if any copy is, development-only only if every copy is,
/// and keeps the first copy's line.
#[derive(Default)]
pub(crate) struct Deps {
    list: Vec<Dependency>,
    index: HashMap<(String, String, Origin), usize>,
}

impl Deps {
    pub(crate) fn push(&mut self, dep: Dependency) {
        let key = (dep.name.clone(), dep.version.clone(), dep.origin.clone());
        match self.index.get(&key).and_then(|&i| self.list.get_mut(i)) {
            Some(existing) => {
                existing.kind = stronger(existing.kind, dep.kind);
                existing.dev = existing.dev && dep.dev;
                if existing.line.is_none() {
                    existing.line = dep.line;
                }
            }
            None => {
                self.index.insert(key, self.list.len());
                self.list.push(dep);
            }
        }
    }

    /// The dependencies in file order: by line where known (JSON and YAML readers visit keys
    /// sorted, not as written), the rest after, in the order they came.
    pub(crate) fn into_vec(self) -> Vec<Dependency> {
        let mut list = self.list;
        list.sort_by_key(|d| d.line.unwrap_or(u32::MAX));
        list
    }
}

fn stronger(a: DependencyKind, b: DependencyKind) -> DependencyKind {
    use DependencyKind::*;
    match (a, b) {
        (Direct, _) | (_, Direct) => Direct,
        (Transitive, _) | (_, Transitive) => Transitive,
        _ => Unknown,
    }
}

/// Which nodes a breadth-first walk reaches from `starts` (iterative: graphs from untrusted
/// files may be deep or cyclic).
pub(crate) fn reach(edges: &[Vec<usize>], starts: impl IntoIterator<Item = usize>) -> Vec<bool> {
    let mut seen = vec![false; edges.len()];
    let mut queue: Vec<usize> = Vec::new();
    for s in starts {
        if let Some(flag) = seen.get_mut(s)
            && !*flag
        {
            *flag = true;
            queue.push(s);
        }
    }
    while let Some(n) = queue.pop() {
        for &m in edges.get(n).map(Vec::as_slice).unwrap_or(&[]) {
            if let Some(flag) = seen.get_mut(m)
                && !*flag
            {
                *flag = true;
                queue.push(m);
            }
        }
    }
    seen
}

/// Development-only status from a graph: a node is dev-only when development roots reach it and
/// production roots do not. Nodes neither reaches keep `false`: when in doubt, a package
/// counts as shipped.
pub(crate) fn dev_only(
    edges: &[Vec<usize>],
    prod_roots: &[usize],
    dev_roots: &[usize],
) -> Vec<bool> {
    let prod = reach(edges, prod_roots.iter().copied());
    let dev = reach(edges, dev_roots.iter().copied());
    prod.iter()
        .zip(dev.iter())
        .map(|(&p, &d)| d && !p)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proven_domain::Ecosystem;

    #[test]
    fn repeats_merge() {
        let mut deps = Deps::default();
        let mut a = Dependency::registry(Ecosystem::Npm, "a", "1.0.0");
        a.dev = true;
        a.kind = DependencyKind::Transitive;
        a.line = Some(4);
        let mut b = a.clone();
        b.dev = false;
        b.kind = DependencyKind::Direct;
        b.line = Some(9);
        deps.push(a);
        deps.push(b);
        deps.push(Dependency::registry(Ecosystem::Npm, "a", "2.0.0"));
        let v = deps.into_vec();
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[0].kind, v[0].dev, v[0].line),
            (DependencyKind::Direct, false, Some(4))
        );
    }

    #[test]
    fn dev_only_walks_cycles() {
        // 0 → 1 → 2 → 1 (cycle); 3 → 2 and 3 → 4.
        let edges = vec![vec![1], vec![2], vec![1], vec![2, 4], vec![]];
        let dev = dev_only(&edges, &[0], &[3]);
        assert_eq!(dev, vec![false, false, false, true, true]);
    }
}
