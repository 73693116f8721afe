//! A repository's identity: the one name every spelling of its address shares, so what
//! Proven remembers about a repository (H-MEM) is found again however a request writes
//! it, and never under another repository's name.

/// The normalised identity of a repository address: `host/path` for a URL or an scp-like
/// address (scheme, user and password, default port, a trailing `.git` and slashes
/// dropped; lowercased), `file:PATH` for a local path or `file://` URL (`.` and `..`
/// resolved lexically: the path need not exist; a caller makes a relative path absolute
/// first, this crate does no IO).
pub fn repository_identity(spec: &str) -> String {
    let spec = spec.trim();
    if let Some(path) = spec.strip_prefix("file://") {
        return local_identity(path);
    }
    if let Some((scheme, rest)) = spec.split_once("://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let default_port = match scheme.to_ascii_lowercase().as_str() {
            "https" => Some("443"),
            "http" => Some("80"),
            "ssh" | "git+ssh" | "ssh+git" => Some("22"),
            "git" => Some("9418"),
            _ => None,
        };
        let host = match host_port.rsplit_once(':') {
            Some((h, port)) if Some(port) == default_port || port.is_empty() => h,
            _ => host_port,
        };
        return remote_identity(host, path);
    }
    // scp-like: [user@]host:path, where host has no slash before the colon.
    if let Some((authority, path)) = spec.split_once(':')
        && !authority.contains('/')
        && !authority.is_empty()
        && !path.starts_with("//")
        && authority.len() > 1
    {
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        return remote_identity(host, path);
    }
    local_identity(spec)
}

fn remote_identity(host: &str, path: &str) -> String {
    let path = path
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    let segments: Vec<&str> = path
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    format!("{}/{}", host.to_ascii_lowercase(), segments.join("/")).to_lowercase()
}

fn local_identity(path: &str) -> String {
    let joined = std::path::Path::new(path);
    let mut parts: Vec<String> = Vec::new();
    for component in joined.components() {
        match component {
            std::path::Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            std::path::Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    let root = if path.starts_with('/') { "/" } else { "" };
    let mut out = format!("file:{root}{}", parts.join("/"));
    if out.ends_with("/.git") {
        out.truncate(out.len() - 5);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_one_remote_is_one_identity() {
        let want = "github.com/acme/widgets";
        for spec in [
            "https://github.com/acme/widgets",
            "https://github.com/acme/widgets.git",
            "https://GitHub.com/Acme/Widgets/",
            "https://user:secret@github.com:443/acme/widgets.git",
            "ssh://git@github.com/acme/widgets.git",
            "ssh://git@github.com:22/acme/widgets",
            "git@github.com:acme/widgets.git",
            "github.com:acme/widgets",
        ] {
            assert_eq!(repository_identity(spec), want, "{spec}");
        }
    }

    #[test]
    fn other_repositories_stay_apart() {
        let a = repository_identity("https://github.com/acme/widgets");
        for other in [
            "https://github.com/acme/widgets2",
            "https://gitlab.com/acme/widgets",
            "https://github.com:8443/acme/widgets",
            "https://github.com/other/widgets",
            "/srv/repos/acme/widgets",
        ] {
            assert_ne!(repository_identity(other), a, "{other}");
        }
    }

    #[test]
    fn local_paths_are_absolute_and_resolved() {
        assert_eq!(repository_identity("/srv/r/./x/../y/"), "file:/srv/r/y");
        assert_eq!(repository_identity("file:///srv/r/y"), "file:/srv/r/y");
        assert_eq!(repository_identity("/srv/r/y/.git"), "file:/srv/r/y");
        assert_eq!(repository_identity("relative/./dir"), "file:relative/dir");
    }
}
