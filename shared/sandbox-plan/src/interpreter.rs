//! Which Python a tree runs on: the newest the project says it supports that the sandbox
//! has an image of. A pure function of the project's declarations (as `deps::python`
//! reads them: bounds such as `python_requires`, and the versions it names in classifiers,
//! tox envlists, CI matrices, `.python-version`, `runtime.txt`) and the configured images;
//! the run record carries its answer and the declaration that decided it.

use crate::record::InterpreterChoice;

/// `X.Y` as numbers; None for anything else (`3`, `pypy3`).
fn minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The version an `==X.Y.*` a named declaration was read into stands for.
fn named_minor(spec: &str) -> Option<(u32, u32)> {
    minor(spec.strip_prefix("==")?.trim_end_matches(".*"))
}

fn show((major, minor): (u32, u32)) -> String {
    format!("{major}.{minor}")
}

/// The image a Python tree runs on, and why; None when the project declares nothing, or
/// nothing any image can meet (the language's default image runs it then, and the
/// dependency record names the mismatch).
///
/// - When the project names versions (classifiers, tox envlist, CI matrices,
///   `.python-version`, `runtime.txt`), the newest named version the sandbox has an image of
///   that its bounds (`python_requires`) allow: the named versions win over an open-ended
///   `>=3.5`, which says nothing of what the project ran on.
/// - When it names versions no image has: the newest image below the newest it names (the
///   nearest to it), or, when it names only Pythons 3 older than every image, the oldest
///   image (it misses the least of what has been removed since, `collections.Iterable`).
///   A project naming only Python 2 has no image near it.
/// - When it names none, the newest image its bounds allow.
pub fn choose_python(
    declared: &[(String, String)],
    images: &[(String, String)],
) -> Option<InterpreterChoice> {
    let mut images: Vec<((u32, u32), &String)> = images
        .iter()
        .filter_map(|(version, image)| Some((minor(version)?, image)))
        .collect();
    images.sort();
    let (named, bounds): (Vec<_>, Vec<_>) = declared
        .iter()
        .partition(|(_, source)| crate::python::names_pythons(source));
    let bounds: Vec<(&String, proven_version::pypi::SpecifierSet)> = bounds
        .into_iter()
        .filter_map(|(spec, source)| {
            Some((
                source,
                proven_version::pypi::SpecifierSet::parse(spec, None).ok()?,
            ))
        })
        .collect();
    let candidates = Candidates {
        declared,
        images,
        bounds,
    };
    let mut names: Vec<((u32, u32), &String)> = named
        .iter()
        .filter_map(|(spec, source)| Some((named_minor(spec)?, source)))
        .collect();
    // By version, each version's sources in the order they were read.
    names.sort_by_key(|(v, _)| *v);
    if let Some(ran) = candidates.newest_ci_ran(&names) {
        return Some(ran);
    }
    if !names.is_empty() {
        return candidates.nearest_named(&names);
    }
    if candidates.bounds.is_empty() {
        return None;
    }
    candidates.newest_allowed()
}

/// The day each Python's first final release (X.Y.0) came out (the days `prepare.py`'s
/// `PYTHON_RELEASED` resolves by). A tree of that day or
/// earlier cannot have run on it: its CI ran a pre-release at most, and its dependencies'
/// wheels for it came later (tqdm of 2018-06-27 names 3.7, released that day; pandas had
/// no 3.7 wheel until 2018-07-05, so its sdist was built against today's numpy and failed).
const RELEASED: &[((u32, u32), &str)] = &[
    ((3, 5), "2015-09-13"),
    ((3, 6), "2016-12-23"),
    ((3, 7), "2018-06-27"),
    ((3, 8), "2019-10-14"),
    ((3, 9), "2020-10-05"),
    ((3, 10), "2021-10-04"),
    ((3, 11), "2022-10-24"),
    ((3, 12), "2023-10-02"),
    ((3, 13), "2024-10-07"),
    ((3, 14), "2025-10-07"),
];

/// [`choose_python`] among the images of Pythons released before the base's day (`before`,
/// RFC 3339), as the project's CI of that day could run; the record says which it passed
/// over. With no date, or no image that old, as [`choose_python`].
pub fn choose_python_as_of(
    declared: &[(String, String)],
    images: &[(String, String)],
    before: Option<&str>,
) -> Option<InterpreterChoice> {
    let unfiltered = choose_python(declared, images);
    let Some(day) = before.and_then(|b| b.get(..10)) else {
        return unfiltered;
    };
    let released = |v: &str| {
        let v = minor(v)?;
        RELEASED.iter().find(|(r, _)| *r == v).map(|(_, d)| *d)
    };
    let earlier: Vec<(String, String)> = images
        .iter()
        .filter(|(v, _)| released(v).is_none_or(|d| d < day))
        .cloned()
        .collect();
    if earlier.len() == images.len() || earlier.is_empty() {
        return unfiltered;
    }
    let Some(mut chosen) = choose_python(declared, &earlier) else {
        return unfiltered;
    };
    if let Some(later) = unfiltered.filter(|u| u.version != chosen.version) {
        chosen.because = format!(
            "{}; not Python {}, released {}, not before the base's day ({day}): its CI of that day could not have run it, nor its dependencies' wheels for it",
            chosen.because,
            later.version,
            released(&later.version).unwrap_or("later"),
        );
    }
    Some(chosen)
}

/// The images to choose among, and what the project's bounds allow.
struct Candidates<'a> {
    declared: &'a [(String, String)],
    /// By version, oldest first.
    images: Vec<((u32, u32), &'a String)>,
    bounds: Vec<(&'a String, proven_version::pypi::SpecifierSet)>,
}

impl Candidates<'_> {
    fn allowed(&self, v: (u32, u32)) -> bool {
        self.bounds
            .iter()
            .all(|(_, set)| set.contains(&show(v), Some(true), None))
    }

    fn bounds_said(&self) -> String {
        let said: Vec<String> = self
            .declared
            .iter()
            .filter(|(_, source)| !crate::python::names_pythons(source))
            .map(|(spec, source)| format!("{source} {spec}"))
            .collect();
        if said.is_empty() {
            String::new()
        } else {
            format!("; {} allows it", said.join(", "))
        }
    }

    /// The newest Python the project's own CI ran (Travis, GitHub workflows, Azure
    /// Pipelines, AppVeyor) that an image has and the bounds allow, when the project names
    /// a newer one its CI did not run (a classifier for a Python released weeks before:
    /// spaCy of 2019-10-30 names 3.8, its CI ran 3.5 to 3.7, and its dependencies had no
    /// wheels for 3.8 yet). None when no CI names one an image has, or when the CI ran the
    /// newest named: [`Self::nearest_named`] decides then.
    fn newest_ci_ran(&self, names: &[((u32, u32), &String)]) -> Option<InterpreterChoice> {
        let on_image = |v: &(u32, u32)| self.allowed(*v) && self.images.iter().any(|(i, _)| i == v);
        let newest = names.iter().map(|(v, _)| *v).filter(on_image).max()?;
        let ci = |s: &String| crate::python::is_ci(s);
        let ran = names
            .iter()
            .filter(|(v, s)| ci(s) && on_image(v))
            .map(|(v, _)| *v)
            .max()?;
        if ran == newest {
            return None;
        }
        let image = self.images.iter().find(|(v, _)| *v == ran)?.1;
        let mut sources: Vec<&str> = Vec::new();
        for (_, source) in names.iter().filter(|(n, s)| *n == ran && ci(s)) {
            if !sources.contains(&source.as_str()) {
                sources.push(source);
            }
        }
        let mut not_ran: Vec<&str> = Vec::new();
        for (_, source) in names.iter().filter(|(n, _)| *n == newest) {
            if !not_ran.contains(&source.as_str()) {
                not_ran.push(source);
            }
        }
        Some(choice(
            ran,
            image,
            format!(
                "the newest Python the project's CI ran that the sandbox has: {} ({}){}; not {}, which {} names but its CI did not run",
                show(ran),
                sources.join(", "),
                self.bounds_said(),
                show(newest),
                not_ran.join(", ")
            ),
        ))
    }

    /// The project names versions (`names`, by version): the newest named one an image has
    /// and the bounds allow, else the nearest image below the newest named, else (names
    /// only of Pythons 3 older than every image) the oldest image.
    fn nearest_named(&self, names: &[((u32, u32), &String)]) -> Option<InterpreterChoice> {
        if let Some((v, image)) = self
            .images
            .iter()
            .rev()
            .find(|(v, _)| self.allowed(*v) && names.iter().any(|(n, _)| n == v))
        {
            let mut sources: Vec<&str> = Vec::new();
            for (_, source) in names.iter().filter(|(n, _)| n == v) {
                if !sources.contains(&source.as_str()) {
                    sources.push(source);
                }
            }
            return Some(choice(
                *v,
                image,
                format!(
                    "the newest Python the project names that the sandbox has: {} ({}){}",
                    show(*v),
                    sources.join(", "),
                    self.bounds_said()
                ),
            ));
        }
        let newest_named = names.last().map(|(v, _)| *v)?;
        let newest_source = names.last().map(|(_, s)| s.as_str()).unwrap_or_default();
        if let Some((v, image)) = self
            .images
            .iter()
            .rev()
            .find(|(v, _)| self.allowed(*v) && *v <= newest_named)
        {
            return Some(choice(
                *v,
                image,
                format!(
                    "the project names Python up to {} ({newest_source}), which the sandbox has no image of: the newest image below it{}",
                    show(newest_named),
                    self.bounds_said()
                ),
            ));
        }
        let oldest = self.images.iter().find(|(v, _)| self.allowed(*v));
        match oldest {
            Some((v, image)) if newest_named.0 == 3 && newest_named < *v => Some(choice(
                *v,
                image,
                format!(
                    "the project names only Pythons older than every image (up to {}, {newest_source}): the oldest image, the nearest to them",
                    show(newest_named)
                ),
            )),
            _ => None,
        }
    }

    /// The project names no version: the newest image its bounds allow.
    fn newest_allowed(&self) -> Option<InterpreterChoice> {
        self.images
            .iter()
            .rev()
            .find(|(v, _)| self.allowed(*v))
            .map(|(v, image)| {
                let said: Vec<String> = self
                    .declared
                    .iter()
                    .map(|(spec, source)| format!("{source} {spec}"))
                    .collect();
                choice(
                    *v,
                    image,
                    format!(
                        "the newest Python the sandbox has that the project allows: {} ({})",
                        show(*v),
                        said.join(", ")
                    ),
                )
            })
    }
}

fn choice(v: (u32, u32), image: &str, because: String) -> InterpreterChoice {
    InterpreterChoice {
        version: show(v),
        image: image.to_string(),
        because,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(spec, source)| (spec.to_string(), source.to_string()))
            .collect()
    }

    const IMAGES: &[(&str, &str)] = &[("3.11", "py311"), ("3.8", "py38"), ("3.7", "py37")];

    fn images() -> Vec<(String, String)> {
        declared(IMAGES)
    }

    fn pick(items: &[(&str, &str)]) -> Option<(String, String)> {
        choose_python(&declared(items), &images()).map(|c| (c.image, c.because))
    }

    /// tqdm of 2018-06-27 names 3.7 (its tox envlist), released that very day: its CI ran
    /// 3.6, and pandas had no 3.7 wheel yet. A Python released on or after the base's day is
    /// passed over, and the record says so; a day later in the year it is the choice again,
    /// and with no date, or no image that old, nothing changes.
    #[test]
    fn a_python_released_on_or_after_the_bases_day_is_not_chosen() {
        let images = declared(&[("3.8", "py38"), ("3.7", "py37"), ("3.6", "py36")]);
        let project = declared(&[
            ("==3.6.*", "tox.ini envlist"),
            ("==3.7.*", "tox.ini envlist"),
            (">=2.6, !=3.0.*", "setup.py"),
        ]);
        let choice =
            choose_python_as_of(&project, &images, Some("2018-06-27T00:00:00Z")).expect("a choice");
        assert_eq!(choice.version, "3.6");
        assert!(
            choice.because.ends_with(
                "; not Python 3.7, released 2018-06-27, not before the base's day (2018-06-27): its CI of that day could not have run it, nor its dependencies' wheels for it"
            ),
            "{}",
            choice.because
        );
        let later = choose_python_as_of(&project, &images, Some("2018-12-01T00:00:00Z"));
        assert_eq!(later.map(|c| c.version).as_deref(), Some("3.7"));
        assert_eq!(
            choose_python_as_of(&project, &images, None).map(|c| c.version),
            choose_python(&project, &images).map(|c| c.version)
        );
        // Older than every image: the choice without the date.
        let old = choose_python_as_of(&project, &images, Some("2010-01-01T00:00:00Z"));
        assert_eq!(old.map(|c| c.version).as_deref(), Some("3.7"));
    }

    /// spaCy of 2019-10-30: its classifiers name 3.8 (released sixteen days before), its CI
    /// (Azure Pipelines, Travis) ran 2.7 and 3.5 to 3.7, and its dependencies had no wheels
    /// for 3.8 yet (blis, thinc, preshed: every one built from source until the preparation's
    /// time ran out). The newest Python its CI ran is chosen, and the record says which it
    /// passed over; a CI that ran the newest named, or that names none an image has, leaves
    /// the choice to the names.
    #[test]
    fn a_python_the_project_names_but_its_ci_never_ran_is_passed_over() {
        let spacy = [
            (">=2.7,!=3.0.*,!=3.1.*,!=3.2.*,!=3.3.*", "setup.cfg"),
            ("==2.7.*", "setup.cfg classifiers"),
            ("==3.5.*", "setup.cfg classifiers"),
            ("==3.6.*", "setup.cfg classifiers"),
            ("==3.7.*", "setup.cfg classifiers"),
            ("==3.8.*", "setup.cfg classifiers"),
            ("==2.7.*", ".travis.yml python"),
            ("==3.5.*", "azure-pipelines.yml python.version"),
            ("==3.6.*", "azure-pipelines.yml python.version"),
            ("==3.7.*", "azure-pipelines.yml python.version"),
        ];
        let choice = choose_python(&declared(&spacy), &images()).expect("a choice");
        assert_eq!(
            (choice.version.as_str(), choice.image.as_str()),
            ("3.7", "py37")
        );
        assert_eq!(
            choice.because,
            "the newest Python the project's CI ran that the sandbox has: 3.7 (azure-pipelines.yml python.version); setup.cfg >=2.7,!=3.0.*,!=3.1.*,!=3.2.*,!=3.3.* allows it; not 3.8, which setup.cfg classifiers names but its CI did not run"
        );
        // Its CI ran 3.8 too: the newest named.
        let mut ran = declared(&spacy);
        ran.push((
            "==3.8.*".into(),
            ".github/workflows/ci.yml python-version".into(),
        ));
        let choice = choose_python(&ran, &images()).expect("a choice");
        assert_eq!(choice.version, "3.8");
        assert!(
            choice
                .because
                .starts_with("the newest Python the project names")
        );
        // Its CI ran only Pythons no image has (2.7): the names decide.
        let old_ci: Vec<(&str, &str)> = spacy
            .iter()
            .filter(|(_, s)| !s.starts_with("azure"))
            .copied()
            .collect();
        assert_eq!(
            choose_python(&declared(&old_ci), &images()).map(|c| c.version),
            Some("3.8".to_string())
        );
    }

    #[test]
    fn the_newest_python_a_2019_project_names_wins_over_its_open_python_requires() {
        // A 2019 project: python_requires='>=3.5', classifiers 3.5 to 3.8, tox py35..py38.
        let project = [
            (">=3.5", "setup.py"),
            ("==3.5.*", "tox.ini envlist"),
            ("==3.6.*", "tox.ini envlist"),
            ("==3.7.*", "tox.ini envlist"),
            ("==3.8.*", "tox.ini envlist"),
            ("==3.5.*", "setup.py classifiers"),
            ("==3.8.*", "setup.py classifiers"),
        ];
        let choice = choose_python(&declared(&project), &images()).expect("a choice");
        assert_eq!(choice.version, "3.8");
        assert_eq!(choice.image, "py38");
        assert_eq!(
            choice.because,
            "the newest Python the project names that the sandbox has: 3.8 (tox.ini envlist, setup.py classifiers); setup.py >=3.5 allows it"
        );
        // Named only by the classifiers, or only by a CI matrix: the same.
        assert_eq!(
            pick(&[(">=3.5", "setup.py"), ("==3.8.*", "setup.py classifiers")])
                .map(|c| c.0)
                .as_deref(),
            Some("py38")
        );
        assert_eq!(
            pick(&[
                ("==3.6.*", ".github/workflows/ci.yml python-version"),
                ("==3.7.*", ".github/workflows/ci.yml python-version"),
            ])
            .map(|c| c.0)
            .as_deref(),
            Some("py37")
        );
    }

    #[test]
    fn bounds_alone_choose_the_newest_image_they_allow() {
        assert_eq!(
            pick(&[(">=3.5", "setup.py")]),
            Some((
                "py311".to_string(),
                "the newest Python the sandbox has that the project allows: 3.11 (setup.py >=3.5)"
                    .to_string()
            ))
        );
        // An upper bound in python_requires.
        assert_eq!(
            pick(&[(">=3.6, <3.8", "setup.cfg")])
                .map(|c| c.0)
                .as_deref(),
            Some("py37")
        );
        // A bound beats a named version it excludes.
        assert_eq!(
            pick(&[
                ("<3.8", "setup.cfg"),
                ("==3.8.*", "setup.py classifiers"),
                ("==3.7.*", "setup.py classifiers")
            ])
            .map(|c| c.0)
            .as_deref(),
            Some("py37")
        );
        assert_eq!(pick(&[(">=3.12", "pyproject.toml")]), None, "none fits");
        assert_eq!(pick(&[]), None, "nothing declared");
        assert_eq!(
            pick(&[("not a specifier", "setup.py")]),
            None,
            "a bound that does not parse bounds nothing, and chooses nothing"
        );
    }

    #[test]
    fn named_versions_no_image_has_choose_the_nearest_image() {
        // Newer than some images: the newest image below the newest named.
        let (image, because) = pick(&[
            ("==3.9.*", "tox.ini envlist"),
            ("==3.10.*", "tox.ini envlist"),
        ])
        .expect("a choice");
        assert_eq!(image, "py38");
        assert!(
            because.contains("up to 3.10 (tox.ini envlist)"),
            "{because}"
        );
        // Older than every image: the oldest.
        assert_eq!(
            pick(&[
                ("==3.4.*", "tox.ini envlist"),
                ("==2.7.*", "tox.ini envlist")
            ])
            .map(|c| c.0)
            .as_deref(),
            Some("py37")
        );
        // Python 2 only: none is near.
        assert_eq!(pick(&[("==2.7.*", "tox.ini envlist")]), None);
        // Images named by something that is not `X.Y` are not chosen.
        assert_eq!(
            choose_python(
                &declared(&[("==3.8.*", "setup.py classifiers")]),
                &declared(&[("3", "py3"), ("pypy", "pypy")])
            ),
            None
        );
    }
}
