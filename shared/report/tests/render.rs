//! Renderings of one report with findings of every kind: SARIF checked against the
//! official 2.1.0 schema, the others pinned by snapshots.

use proven_report::*;

fn finding(level: Level, kind: FindingKind, name: &str, id: &str, line: Option<u32>) -> Finding {
    Finding {
        id: format!("dep:crates.io:{name}:{id}"),
        proof_level: level,
        kind,
        title: format!("{name} 1.2.1 is affected by {id}"),
        package: Some(PackageChange {
            ecosystem: "crates.io".into(),
            name: name.into(),
            old_version: Some("1.0.0".into()),
            new_version: "1.2.1".into(),
            dependency: "direct".into(),
            dev: false,
        }),
        location: Location {
            path: "Cargo.lock".into(),
            line,
        },
        advisory: Some(AdvisoryRef {
            id: id.into(),
            aliases: vec!["CVE-2022-24713".into()],
            summary: Some("Regexes with <large> repetitions | take *long*".into()),
            severity: vec![SeverityRef {
                kind: "CVSS_V3".into(),
                score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H".into(),
                base_score: cvss_base_score("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H"),
            }],
            published: Some("2022-03-08T12:00:00Z".into()),
            modified: None,
        }),
        exploited: (level == Level::Exploited).then(|| KevRef {
            cve: "CVE-2022-24713".into(),
            date_added: Some("2022-04-01".into()),
            known_ransomware_campaign_use: Some("Unknown".into()),
        }),
        epss: Some(EpssRef {
            cve: "CVE-2022-24713".into(),
            probability: 0.01234,
            percentile: 0.5,
            score_date: None,
        }),
        fix: Some(FixRef {
            version: Some("1.5.5".into()),
            note: "smallest version outside every affected range".into(),
            proposed: None,
        }),
        claim: None,
        skeptic: None,
        patch: None,
        fix_not_proved: None,
        reachability: None,
        evidence: vec![Evidence {
            kind: "advisory_row".into(),
            advisory_id: Some(id.into()),
            affected_index: Some(0),
            matched: Some("range 0 (SEMVER)".into()),
            row: Some(
                serde_json::json!({"package": {"ecosystem": "crates.io", "name": name},
                "ranges": [{"type": "SEMVER", "events": [{"introduced": "0.0.0-0"}, {"fixed": "1.5.5"}]}]}),
            ),
            run: None,
            test: None,
            tool: None,
        }],
    }
}

/// A defect proved by a test: no package, no advisory; runs as evidence.
fn defect() -> Finding {
    let run = |side: &str, outcome: &str, code: i64| RunRef {
        run_id: format!("r0-{side}-1"),
        tests: None,
        environment: Vec::new(),
        side: side.into(),
        commit: if side == "base" {
            "a".repeat(40)
        } else {
            "b".repeat(40)
        },
        image: "proven-sandbox-python:local".into(),
        image_id: String::new(),
        command: vec![
            "python3".into(),
            "-m".into(),
            "pytest".into(),
            "-q".into(),
            "tests/test_add.py".into(),
        ],
        exit_code: Some(code),
        outcome: outcome.into(),
        duration_ms: 812,
        output_tail: "1 failed in 0.03s".into(),
        output_sha256: "c".repeat(64),
    };
    Finding {
        id: "defect:calc.py:0123456789abcdef".into(),
        proof_level: Level::Reproduced,
        kind: FindingKind::Defect,
        title: "add subtracts".into(),
        package: None,
        location: Location {
            path: "calc.py".into(),
            line: None,
        },
        advisory: None,
        exploited: None,
        epss: None,
        fix: None,
        claim: Some("add(2, 3) returns -1 on the change <instead> of 5".into()),
        skeptic: Some(SkepticRef {
            verdict: "conceded".into(),
            reason: "the change run fails".into(),
            artifact: Some("run r0-change-1".into()),
            refutation: None,
            needs: None,
        }),
        fix_not_proved: None,
        reachability: None,
        patch: Some(PatchRef {
            edits: vec![PatchEdit {
                path: "calc.py".into(),
                old_text: "    return a - b".into(),
                new_text: "    return a + b  # <sum>".into(),
                lines: LineSpan::of(
                    "def add(a, b):\n    return a - b\n",
                    "    return a - b",
                    "    return a + b  # <sum>",
                ),
            }],
            explanation: "add adds again".into(),
            attempt: 1,
            runs: vec![run("change+patch", "passed", 0)],
            failing_on_base_too: Vec::new(),
            no_other_tests: false,
            flaky_with_patch: Vec::new(),
            suite_narrowed_to: Vec::new(),
        }),
        evidence: vec![
            Evidence {
                kind: "test_run".into(),
                advisory_id: None,
                affected_index: None,
                matched: None,
                row: None,
                run: Some(run("base", "passed", 0)),
                test: Some(TestRef {
                    path: "tests/test_add.py".into(),
                    code: "def test_add():\n    assert add(2, 3) == 5\n".into(),
                }),
                tool: None,
            },
            Evidence {
                kind: "test_run".into(),
                advisory_id: None,
                affected_index: None,
                matched: None,
                row: None,
                run: Some(run("change", "test_failed", 1)),
                test: None,
                tool: None,
            },
        ],
    }
}

/// A defect whose fix was tried and not proved, that a Skeptic refuted without evidence.
fn unfixed_defect() -> Finding {
    let mut f = defect();
    f.id = "defect:calc.py:fedcba9876543210".into();
    f.title = "divide floors".into();
    f.patch = None;
    f.skeptic = Some(SkepticRef {
        verdict: "refuted_without_evidence".into(),
        reason: "it looks flaky (not flaky: 3 more runs per side with other seeds all agree)"
            .into(),
        artifact: None,
        refutation: Some("flaky".into()),
        needs: None,
    });
    f.fix_not_proved = Some(FixNotProved {
        attempts: 2,
        reason:
            "with the patch the finding's own test does not pass: test_failed (1 failed in 0.02s)"
                .into(),
        runs: Vec::new(),
    });
    f
}

fn sample() -> Report {
    let mut r = Report::new(ReportKind::Review, "/repo");
    r.review_id = Some("01TEST".into());
    r.base = Some(RevisionRef::new("main", "a".repeat(40)));
    r.head = Some(RevisionRef::new("HEAD", "b".repeat(40)));
    r.plan = Some(Plan {
        change_kind: "dependency".into(),
        class: "dependency".into(),
        band: "light".into(),
        runs: vec!["dependency evidence".into()],
        left_out: vec!["model agents: not configured".into()],
        partial: None,
    });
    r.findings = vec![
        defect(),
        unfixed_defect(),
        finding(
            Level::Advisory,
            FindingKind::Unmaintained,
            "atty",
            "RUSTSEC-2024-0375",
            None,
        ),
        finding(
            Level::Exploited,
            FindingKind::Vulnerability,
            "regex",
            "RUSTSEC-2022-0013",
            Some(42),
        ),
        finding(
            Level::Advisory,
            FindingKind::Vulnerability,
            "regex-syntax",
            "RUSTSEC-2022-0013",
            Some(50),
        ),
    ];
    r.left_out = vec![LeftOutEntry {
        path: "link".into(),
        reason: "symlink".into(),
    }];
    r.input_errors = vec![InputError {
        path: "web/package-lock.json".into(),
        line: Some(3),
        side: Some("head".into()),
        message: "truncated".into(),
    }];
    r.not_seen = vec![NotSeen {
        what: "web/package-lock.json (head)".into(),
        reason: "could not be read".into(),
    }];
    r.unproven = vec![Unproven {
        claim: "divide <rounds> down".into(),
        reason: "the Prover's test passed on the change".into(),
        runs: Vec::new(),
    }];
    r.failed_services = vec![FailedService {
        service: "skeptic r1".into(),
        message: "skeptic model is unavailable".into(),
    }];
    r.autofix = Some(Autofix {
        verdict: "rejected".into(),
        edits: vec![PatchEdit {
            path: "calc.py".into(),
            old_text: "a - b".into(),
            new_text: "a + b".into(),
            lines: None,
        }],
        fixes: vec!["add subtracts".into()],
        open: vec!["divide <floors>: no proved fix".into()],
        runs: Vec::new(),
        flaky: Vec::new(),
        narrowed: Vec::new(),
        diff: String::new(),
    });
    r.coverage = Some(Coverage {
        verdict: "incomplete".into(),
        surfaces: vec![
            CoverageSurface {
                surface: "src".into(),
                probe: None,
                status: "examined".into(),
                detail: "round one examined src/calc.py".into(),
            },
            CoverageSurface {
                surface: "web/login.py".into(),
                probe: Some("an expired <session> still logs in".into()),
                status: "unresolved".into(),
                detail: "needs a test runner for \"web/login.py\"".into(),
            },
        ],
    });
    r.seal();
    r
}

#[test]
fn seal_orders_by_proof_and_counts_every_level() {
    let r = sample();
    assert_eq!(
        r.findings[0].proof_level,
        Level::Reproduced,
        "strongest proof first"
    );
    assert_eq!(r.findings[2].proof_level, Level::Exploited);
    assert_eq!(
        r.proof_counts,
        LevelCounts {
            reproduced: 2,
            exploited: 1,
            advisory: 2,
            tool: 0
        }
    );
    assert_eq!(
        r.status,
        Status::Incomplete,
        "an unreadable input makes the review incomplete"
    );
    let json: serde_json::Value =
        serde_json::from_str(&render(&r, Format::Json, false)).expect("json");
    let counts = json["proof_counts"].as_object().expect("counts object");
    assert_eq!(counts.len(), 4, "every level present: {counts:?}");
    assert_eq!(json["schema_version"], 1);
}

#[test]
fn sarif_validates_against_the_official_schema() {
    let schema_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/schemas/sarif-schema-2.1.0.json"
    );
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(schema_path).expect("SARIF schema in ../shared/data"),
    )
    .expect("schema json");
    let validator = jsonschema::validator_for(&schema).expect("compile schema");
    for report in [sample(), Report::new(ReportKind::Scan, "Cargo.lock")] {
        let sarif: serde_json::Value =
            serde_json::from_str(&render(&report, Format::Sarif, false)).expect("sarif json");
        let errors: Vec<String> = validator
            .iter_errors(&sarif)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "SARIF does not validate: {errors:#?}");
    }
    // What GitHub code scanning needs beyond the schema: rule ids, locations, fingerprints.
    let sarif: serde_json::Value =
        serde_json::from_str(&render(&sample(), Format::Sarif, false)).expect("sarif");
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    assert_eq!(
        rules.len(),
        3,
        "one rule per advisory, shared by its findings, and one for defects"
    );
    assert_eq!(rules[0]["id"], "proven/defect");
    assert_eq!(run["properties"]["coverage"]["verdict"], "incomplete");
    // The sample is incomplete: its one invocation says the analysis did not succeed, and
    // what did not run, so no reader takes its results for a whole analysis.
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{invocation:#}");
    let notification = &invocation["toolExecutionNotifications"][0];
    assert_eq!(notification["level"], "error");
    assert!(
        notification["message"]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("The review is incomplete: ") && t.contains("skeptic")),
        "{notification:#}"
    );
    let mut complete = sample();
    complete.failed_services.clear();
    complete.input_errors.clear();
    complete.status = Status::Complete;
    let sarif: serde_json::Value =
        serde_json::from_str(&render(&complete, Format::Sarif, false)).expect("sarif");
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
    assert!(sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"].is_null());
    assert_eq!(run["properties"]["autofix"]["verdict"], "rejected");
    assert_eq!(
        run["results"][0]["properties"]["patch"]["edits"][0]["path"],
        "calc.py"
    );
    assert_eq!(
        run["properties"]["unproven"][0]["reason"],
        "the Prover's test passed on the change"
    );
    assert_eq!(
        run["properties"]["not_seen"][0]["what"],
        "web/package-lock.json (head)"
    );
    assert_eq!(
        run["properties"]["failed_services"][0]["service"],
        "skeptic r1"
    );
    assert_eq!(
        run["properties"]["coverage"]["surfaces"][1]["status"],
        "unresolved"
    );
    assert_eq!(rules[1]["properties"]["security-severity"], "7.5");
    assert_eq!(
        run["results"][0]["properties"]["runs"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    for result in run["results"].as_array().expect("results") {
        let idx = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(result["ruleId"], rules[idx]["id"]);
        let loc = &result["locations"][0]["physicalLocation"];
        assert!(
            matches!(
                loc["artifactLocation"]["uri"].as_str(),
                Some("Cargo.lock" | "calc.py")
            ),
            "{loc}"
        );
        assert!(loc["region"]["startLine"].as_u64().expect("startLine") >= 1);
        assert!(result["partialFingerprints"]["provenFinding/v1"].is_string());
        assert!(
            result["message"]["text"]
                .as_str()
                .expect("text")
                .starts_with('['),
            "proof level first"
        );
    }
}

#[test]
fn text_shows_proof_first_and_every_section() {
    let text = render(&sample(), Format::Text, false);
    insta::assert_snapshot!("text", text);
    assert!(!text.contains('\u{1b}'), "no colour codes unless asked");
    assert!(render(&sample(), Format::Text, true).contains('\u{1b}'));
}

#[test]
fn html_escapes_third_party_text_and_shows_every_section() {
    let html = render(&sample(), Format::Html, false);
    assert!(html.starts_with("<!doctype html>"), "{html}");
    assert!(
        !html.contains("<large>") && html.contains("&lt;large&gt;"),
        "advisory text never becomes markup"
    );
    assert!(!html.contains("<instead>"), "claims never become markup");
    assert!(
        !html.contains("<session>") && html.contains("&lt;session&gt;"),
        "an auditor's probe never becomes markup"
    );
    for section in [
        "Findings by proof level",
        "Inputs that could not be read",
        "What this review could not see",
        "Left out of the trees",
        "Coverage: incomplete",
        "Unproven (not findings)",
        "Failed services: this review is incomplete",
        "Proposed fix",
        "Autofix: rejected",
    ] {
        assert!(html.contains(section), "{section}");
    }
    let first = html
        .find("class=\"level reproduced\"")
        .expect("reproduced first");
    assert!(
        first < html.find("class=\"level exploited\"").expect("exploited"),
        "proof level order"
    );
}

#[test]
fn markdown_escapes_third_party_text() {
    let md = render(&sample(), Format::Markdown, false);
    insta::assert_snapshot!("markdown", md);
    assert!(!md.contains("<large>"), "advisory text must not open HTML");
    assert!(!md.contains("<rounds>"), "a claim must not open HTML");
    assert!(md.contains("### Autofix: rejected"), "{md}");
    assert!(
        !md.contains("<floors>"),
        "an open finding's title must not open HTML"
    );
    assert!(
        md.contains("```diff\n-     return a - b\n+     return a + b  # \\<sum\\>\n```")
            || md.contains("```diff\n-     return a - b\n+     return a + b  # <sum>\n```"),
        "the proposed fix as a diff: {md}"
    );
    assert!(
        !md.contains("<session>"),
        "an auditor's probe must not open HTML"
    );
    assert!(
        md.starts_with("## Proven review"),
        "rendered, not an error: {md}"
    );
}

#[test]
fn a_github_review_carries_proved_fixes_as_suggestions() {
    let review: serde_json::Value =
        serde_json::from_str(&render(&sample(), Format::Github, false)).expect("json");
    assert_eq!(review["event"], "COMMENT");
    let body = review["body"].as_str().expect("body");
    // The sample is incomplete: its first line says what did not run, never looking clean.
    let first = body.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("**Incomplete review")
            && first.contains("skeptic r1 (skeptic model is unavailable)"),
        "{first}"
    );
    assert!(body.contains("\n## Proven review"), "{body}");
    assert!(
        body.contains("<details><summary>Unproven (not findings)"),
        "unproven claims fold away: {body}"
    );
    assert!(
        body.contains("<details><summary>Fix not proved: 1"),
        "so do fixes not proved: {body}"
    );
    assert!(review.get("commit_id").is_none(), "no head, no marker");
    let published = proven_report::github_review(&sample(), Some(&"c".repeat(40)));
    assert_eq!(published["commit_id"], "c".repeat(40));
    assert!(
        published["body"].as_str().is_some_and(|b| b
            .trim_end()
            .ends_with(&proven_report::review_marker(&"c".repeat(40)))),
        "the marker that finds it again: {published}"
    );
    let mut complete = sample();
    complete.status = proven_report::Status::Complete;
    complete.failed_services.clear();
    let clean = proven_report::github_review(&complete, None);
    assert!(
        clean["body"]
            .as_str()
            .is_some_and(|b| b.starts_with("## Proven review")),
        "{clean}"
    );
    let comments = review["comments"].as_array().expect("comments");
    assert_eq!(comments.len(), 1, "one suggestion per edit of a proved fix");
    assert_eq!(comments[0]["path"], "calc.py");
    assert_eq!(comments[0]["line"], 2);
    assert_eq!(comments[0]["side"], "RIGHT");
    assert!(comments[0].get("start_line").is_none(), "one line");
    assert!(
        comments[0]["body"]
            .as_str()
            .is_some_and(|b| b.ends_with("```suggestion\n    return a + b  # <sum>\n```")),
        "{}",
        comments[0]["body"]
    );
}

/// A fix that was tried and not proved is said, with why, in every format: never a silence,
/// never shown as a patch.
#[test]
fn a_fix_not_proved_is_said_with_its_reason_in_every_format() {
    let report = sample();
    let reason = "with the patch the finding's own test does not pass";
    for format in [Format::Text, Format::Markdown, Format::Html, Format::Json] {
        let out = render(&report, format, false);
        let flat = out.replace("&#x27;", "'").replace("\\'", "'");
        assert!(
            out.contains("fix not proved") || out.contains("fix_not_proved"),
            "{format:?}: {out}"
        );
        assert!(flat.contains(reason), "{format:?} names why: {out}");
    }
    let sarif: serde_json::Value =
        serde_json::from_str(&render(&report, Format::Sarif, false)).expect("sarif");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    let unfixed = results
        .iter()
        .find(|r| r["properties"]["fix_not_proved"].is_object())
        .expect("a SARIF result carries fix_not_proved");
    assert!(
        unfixed["properties"]["fix_not_proved"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains(reason))
    );
    let github: serde_json::Value =
        serde_json::from_str(&render(&report, Format::Github, false)).expect("json");
    let body = github["body"].as_str().expect("body");
    assert!(body.contains("fix not proved"), "{body}");
    assert_eq!(
        github["comments"].as_array().map(Vec::len),
        Some(1),
        "an unproved fix is never a suggestion"
    );
}

/// Every format's words for a proved fix, flattened as a reader sees them (GitHub: the
/// review's body and each comment's).
fn shown_words(report: &proven_report::Report, format: Format) -> String {
    let mut out = render(report, format, false);
    if format == Format::Github {
        let review: serde_json::Value = serde_json::from_str(&out).expect("json");
        out = std::iter::once(&review["body"])
            .chain(
                review["comments"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| &c["body"]),
            )
            .filter_map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join("\n");
    }
    out.replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("\\'", "'")
        .replace("\\_", "_")
}

/// A fix proved while the package's tests fail where they fail on the base too says so, with
/// those tests, in every format; a fix in a package whose suite ran no test on either side
/// says that; one whose suite failed a test once with the patch and passed it in a second
/// run and on the base names that test as flaky. Never "so do the package's tests" for any.
#[test]
fn a_fix_held_to_what_it_breaks_says_which_tests_fail_on_the_base_too() {
    let pre_existing = |p: &mut PatchRef| {
        p.failing_on_base_too = vec!["tests/test_env.py::test_needs_network".into()];
    };
    let no_other = |p: &mut PatchRef| p.no_other_tests = true;
    let flaky = |p: &mut PatchRef| {
        p.failing_on_base_too = vec!["tests/test_env.py::test_needs_network".into()];
        p.flaky_with_patch = vec!["tests/test_server.py::test_ping".into()];
    };
    type Set<'a> = &'a dyn Fn(&mut PatchRef);
    let cases: [(Set, &str, &str); 3] = [
        (
            &pre_existing,
            "the package's tests fail only where they fail on the base too (1: tests/test_env.py::test_needs_network)",
            "failing_on_base_too",
        ),
        (&no_other, proven_report::NO_OTHER_TESTS, "no_other_tests"),
        (
            &flaky,
            "the package's tests fail only where they fail on the base too (1: tests/test_env.py::test_needs_network); 1 (tests/test_server.py::test_ping) failed in one run of the package's tests and passed in another of the same tree (with the patch, or on the base): flaky, not the patch's doing",
            "flaky_with_patch",
        ),
    ];
    for (set, words, field) in cases {
        let mut report = sample();
        let proved = report
            .findings
            .iter_mut()
            .find_map(|f| f.patch.as_mut())
            .expect("the sample has a proved fix");
        set(proved);
        // The templates say it in their own sentence: its words after "and ".
        let words = words.trim_start_matches("and ");
        for format in [Format::Text, Format::Markdown, Format::Html, Format::Github] {
            let flat = shown_words(&report, format);
            assert!(flat.contains(words), "{format:?}: {flat}");
            assert!(
                !flat.contains("so do the package's tests"),
                "{format:?}: {flat}"
            );
        }
        let json: serde_json::Value =
            serde_json::from_str(&render(&report, Format::Json, false)).expect("json");
        let patch = json["findings"]
            .as_array()
            .and_then(|f| f.iter().find_map(|f| f.get("patch")))
            .expect("patch");
        assert!(patch.get(field).is_some(), "{patch:#}");
    }
}

/// A fix proved where the package's whole suite outlasted `suite_timeout` and only the test
/// files that import what the patch edits ran says so, naming them, in every format.
#[test]
fn a_fix_proved_by_the_tests_nearest_the_patch_says_only_they_ran() {
    let mut report = sample();
    let proved = report
        .findings
        .iter_mut()
        .find_map(|f| f.patch.as_mut())
        .expect("the sample has a proved fix");
    let files: Vec<String> = (1..=6).map(|i| format!("tests/test_{i}.py")).collect();
    proved.suite_narrowed_to = files.clone();
    let words = proven_report::narrowed_words(&files);
    assert!(words.ends_with(
        "6 (tests/test_1.py, tests/test_2.py, tests/test_3.py, tests/test_4.py, tests/test_5.py, …)"
    ));
    for format in [Format::Text, Format::Markdown, Format::Html, Format::Github] {
        let flat = shown_words(&report, format);
        assert!(flat.contains(&words), "{format:?}: {flat}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&render(&report, Format::Json, false)).expect("json");
    let patch = json["findings"]
        .as_array()
        .and_then(|f| f.iter().find_map(|f| f.get("patch")))
        .expect("patch");
    assert_eq!(patch["suite_narrowed_to"].as_array().map(Vec::len), Some(6));
}

#[test]
fn a_line_span_covers_whole_lines() {
    let text = "a\nbb x cc\nd\ne\n";
    let one = LineSpan::of(text, "x", "y").expect("found");
    assert_eq!(
        (one.start, one.end, one.replacement.as_str()),
        (2, 2, "bb y cc")
    );
    let two = LineSpan::of(text, "cc\nd", "CC\nD").expect("found");
    assert_eq!(
        (two.start, two.end, two.replacement.as_str()),
        (2, 3, "bb x CC\nD")
    );
    let whole = LineSpan::of(text, "d\n", "D\n").expect("found");
    assert_eq!(
        (whole.start, whole.end, whole.replacement.as_str()),
        (3, 3, "D")
    );
    assert!(LineSpan::of(text, "zz", "y").is_none());
    assert!(LineSpan::of(text, "", "y").is_none());
}

#[test]
fn the_autofix_patch_is_a_unified_diff_of_its_files() {
    let edit = |path: &str, old: &str, new: &str| PatchEdit {
        path: path.into(),
        old_text: old.into(),
        new_text: new.into(),
        lines: None,
    };
    let files = vec![
        (
            "calc.py".to_string(),
            "def add(a, b):\n    return a - b\n".to_string(),
        ),
        ("other.py".to_string(), "x = 1\n".to_string()),
    ];
    let diff = proven_report::unified_diff(
        &files,
        &[
            edit("calc.py", "return a - b", "return a + b"),
            edit("other.py", "y", "z"),
        ],
    );
    assert_eq!(
        diff,
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
    );
}

/// Text the change controls: backticks that would close a span, a pipe that would split a
/// table row, HTML, emphasis and, after a blank line, a heading.
const HOSTILE: &str = "a`` <img src=x onerror=alert(1)> | **b** ``\n\n# c";

/// A report whose every path, name and message is [`HOSTILE`].
fn hostile() -> Report {
    let h = || HOSTILE.to_string();
    let mut r = sample();
    r.target = h();
    if let Some(base) = r.base.as_mut() {
        base.rev = h();
    }
    for f in &mut r.findings {
        f.title = h();
        f.location.path = h();
        if let Some(p) = f.patch.as_mut() {
            for e in &mut p.edits {
                e.path = h();
            }
        }
        if let Some(n) = f.fix_not_proved.as_mut() {
            n.reason = h();
        }
        for e in &mut f.evidence {
            if let Some(t) = e.test.as_mut() {
                t.path = h();
            }
            if let Some(run) = e.run.as_mut() {
                run.command.push(h());
            }
        }
    }
    r.left_out[0].path = h();
    r.input_errors[0].path = h();
    r.not_seen[0].what = h();
    r.failed_services[0].service = h();
    r.failed_services[0].message = h();
    if let Some(c) = r.coverage.as_mut() {
        c.surfaces[0].surface = h();
    }
    r
}

/// Reads Markdown as GitHub does (CommonMark, GFM tables) and checks that the hostile text
/// opened nothing: the only HTML is the template's own, no emphasis or heading came from
/// it, and it shows whole as code where it is a path. Returns how often it shows as code.
fn assert_inert(md: &str) -> usize {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let own_html = |h: &str| {
        let h = h.trim();
        [
            "<details>",
            "</details>",
            "<summary>",
            "</summary>",
            "<!-- proven-review",
        ]
        .iter()
        .any(|own| h.starts_with(own))
    };
    let one_line = HOSTILE.replace('\n', " ");
    let (mut as_code, mut in_strong, mut in_heading) = (0, false, false);
    for event in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match event {
            Event::Html(h) | Event::InlineHtml(h) => {
                assert!(
                    own_html(&h),
                    "the change's text opened HTML `{h}` in:\n{md}"
                );
            }
            Event::Start(Tag::Strong) => in_strong = true,
            Event::End(TagEnd::Strong) => in_strong = false,
            Event::Start(Tag::Heading { .. }) => in_heading = true,
            Event::End(TagEnd::Heading(_)) => in_heading = false,
            Event::Text(t) => {
                assert!(!(in_strong && &*t == "b"), "emphasis opened in:\n{md}");
                assert!(
                    !(in_heading && t.trim() == "c"),
                    "a heading opened in:\n{md}"
                );
            }
            Event::Code(c) if c.trim() == one_line => as_code += 1,
            _ => {}
        }
    }
    as_code
}

#[test]
fn the_changes_text_cannot_open_markup_in_a_pull_request_comment() {
    let report = hostile();
    let md = render(&report, Format::Markdown, false);
    // The target, the base, each finding's path (in and out of tables), each edit's and
    // test's path, the left-out and unreadable inputs and the coverage surface: all code.
    let shown = assert_inert(&md);
    assert!(
        shown >= 12,
        "the path shows whole as code ({shown} times):\n{md}"
    );
    let review = github_review(&report, Some(&"c".repeat(40)));
    let body = review["body"].as_str().expect("body");
    assert_inert(body);
    assert!(
        body.lines()
            .next()
            .is_some_and(|l| l.starts_with("**Incomplete review")),
        "the first line still says what did not run: {body}"
    );
    for comment in review["comments"].as_array().expect("comments") {
        assert_inert(comment["body"].as_str().expect("comment body"));
    }
}

#[test]
fn a_review_body_is_cut_to_githubs_limit_with_its_marker_whole() {
    let mut report = sample();
    report.unproven = (0..2_000)
        .map(|i| Unproven {
            claim: format!("claim {i} {}", "é".repeat(40)),
            reason: "the Prover's test passed on the change".into(),
            runs: Vec::new(),
        })
        .collect();
    let head = "d".repeat(40);
    let review = github_review(&report, Some(&head));
    let body = review["body"].as_str().expect("body");
    assert!(body.len() <= MAX_BODY, "{} bytes", body.len());
    assert!(body.contains("cut to GitHub's limit"));
    assert!(body.trim_end().ends_with(&review_marker(&head)));
}

/// Three advisories of one pinned package share one proved edit: one suggestion lists the
/// three findings, never three identical suggestions on one line.
#[test]
fn findings_that_share_a_fix_are_listed_under_one_suggestion() {
    let mut report = Report::new(ReportKind::Review, "/repo");
    report.status = Status::Complete;
    let edit = PatchEdit {
        path: "requirements.txt".into(),
        old_text: "flask==0.12\n".into(),
        new_text: "flask==2.3.3\n".into(),
        lines: Some(LineSpan {
            start: 1,
            end: 1,
            replacement: "flask==2.3.3".into(),
        }),
    };
    for id in ["PYSEC-2018-66", "PYSEC-2019-179", "PYSEC-2023-62"] {
        let mut f = finding(
            Level::Advisory,
            FindingKind::Vulnerability,
            "flask",
            id,
            Some(1),
        );
        f.location.path = "requirements.txt".into();
        if let Some(fix) = f.fix.as_mut() {
            fix.proposed = Some(DependencyFix {
                version: "2.3.3".into(),
                edits: vec![edit.clone()],
                command: None,
                proved: true,
                reason: "no advisory of the package matches it".into(),
            });
        }
        report.findings.push(f);
    }
    report.seal();
    let review = proven_report::github_review(&report, None);
    let comments = review["comments"].as_array().expect("comments");
    assert_eq!(comments.len(), 1, "{comments:#?}");
    let body = comments[0]["body"].as_str().unwrap_or_default();
    assert!(
        body.starts_with("**Dependency fix** for 3 findings ("),
        "{body}"
    );
    for id in ["PYSEC-2018-66", "PYSEC-2019-179", "PYSEC-2023-62"] {
        assert!(body.contains(id), "{id} in {body}");
    }
    assert_eq!(body.matches("```suggestion").count(), 1, "{body}");
}

/// Text from the change (a title, a path, a reason) that names `@user`, `@org/team`, a URL
/// or a `www.` address: read back as GitHub reads a comment, it mentions nobody and links
/// nowhere, in the body and in every suggestion.
#[test]
fn the_changes_text_mentions_nobody_and_links_nowhere() {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    const LOUD: &str = "ping @octocat and @acme/security-team: see https://evil.example/x, \
                        http://a.example and www.evil.example <https://b.example> [c](https://c.example)";
    let mut report = sample();
    for f in &mut report.findings {
        f.title = LOUD.into();
        f.claim = Some(LOUD.into());
        if let Some(n) = f.fix_not_proved.as_mut() {
            n.reason = LOUD.into();
        }
    }
    report.not_seen[0].what = LOUD.into();
    report.failed_services[0].message = LOUD.into();
    let review = github_review(&report, Some(&"c".repeat(40)));
    let mut texts = vec![review["body"].as_str().expect("body").to_string()];
    texts.extend(
        review["comments"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["body"].as_str().map(str::to_string)),
    );
    texts.push(render(&report, Format::Markdown, false));
    let mut seen_title = 0;
    for md in &texts {
        for event in Parser::new_ext(md, Options::ENABLE_TABLES) {
            match event {
                Event::Start(Tag::Link { dest_url, .. }) => {
                    panic!("a link to {dest_url} in:\n{md}")
                }
                Event::Text(t) => {
                    assert!(!mentions(&t), "a mention in `{t}`:\n{md}");
                    for autolink in ["http://", "https://", "www."] {
                        assert!(!t.contains(autolink), "an autolink in `{t}`:\n{md}");
                    }
                    seen_title += usize::from(t.contains("ping @"));
                }
                Event::Html(h) | Event::InlineHtml(h) => {
                    assert!(!h.contains("example"), "HTML from the change `{h}`:\n{md}");
                }
                _ => {}
            }
        }
    }
    assert!(seen_title > 0, "the text itself is still shown: {texts:#?}");
}

/// `@` followed by a letter or digit: how a GitHub mention starts.
fn mentions(t: &str) -> bool {
    t.as_bytes()
        .windows(2)
        .any(|w| w[0] == b'@' && w[1].is_ascii_alphanumeric())
}

/// A claim H-MEM did not raise again is listed, with the refutation it rests on, in every
/// format: never only in the trace.
#[test]
fn a_suppressed_claim_is_listed_with_its_refutation_in_every_format() {
    let mut report = sample();
    report.suppressed.push(Suppressed {
        claim: "parse_date drops the time zone".into(),
        path: "dates.py".into(),
        record: "8844497a0957".into(),
        refuted_by: "01REVIEW".into(),
        on: "2026-12-01T10:00:00Z".into(),
        evidence: "the advisory PYSEC-9999-1 is withdrawn".into(),
    });
    let text = render(&report, Format::Text, false);
    assert!(
        text.contains("Not raised again")
            && text.contains("parse_date drops the time zone (dates.py): refuted by review 01REVIEW on 2026-12-01T10:00:00Z, evidence: the advisory PYSEC-9999-1 is withdrawn"),
        "{text}"
    );
    for format in [Format::Markdown, Format::Html] {
        let out = render(&report, format, false);
        assert!(
            out.contains("Not raised again")
                && out.contains("01REVIEW")
                && out.contains("8844497a0957"),
            "{out}"
        );
    }
    let sarif: serde_json::Value =
        serde_json::from_str(&render(&report, Format::Sarif, false)).expect("sarif");
    assert_eq!(
        sarif["runs"][0]["properties"]["suppressed"][0]["record"],
        "8844497a0957"
    );
    let json: serde_json::Value =
        serde_json::from_str(&render(&report, Format::Json, false)).expect("json");
    assert_eq!(json["suppressed"][0]["refuted_by"], "01REVIEW");
    let body = github_review(&report, None)["body"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(body.contains("Not raised again"), "{body}");
}

#[test]
fn every_format_shows_the_replay_command_under_each_finding() {
    let report = sample();
    let commands: Vec<String> = report
        .findings
        .iter()
        .map(|f| proven_report::replay_command(Some("01TEST"), &f.id))
        .collect();
    assert!(commands.len() >= 2, "{commands:?}");
    assert!(
        commands
            .iter()
            .all(|c| c.starts_with("proven replay 01TEST "))
    );
    let body = github_review(&report, None)["body"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for (name, out) in [
        ("text", render(&report, Format::Text, false)),
        ("markdown", render(&report, Format::Markdown, false)),
        ("html", render(&report, Format::Html, false)),
        ("github", body),
    ] {
        for c in &commands {
            assert!(out.contains(c.as_str()), "{name} lacks {c}:\n{out}");
        }
    }
    let sarif: serde_json::Value =
        serde_json::from_str(&render(&report, Format::Sarif, false)).expect("sarif");
    let replays: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["properties"]["replay"].as_str())
        .collect();
    for c in &commands {
        assert!(replays.contains(&c.as_str()), "{replays:?}");
    }
    let mut scan = report.clone();
    scan.review_id = None;
    let text = render(&scan, Format::Text, false);
    assert!(text.contains("proven replay REPORT.json "), "{text}");
}

/// A `tool` finding: clippy reports it on the change and not on the base, at one version.
fn tool_finding() -> Finding {
    let mut f = defect();
    f.id = "tool:src/lib.rs:0123456789abcdef".into();
    f.proof_level = Level::Tool;
    f.title = "clippy: unneeded `return` statement".into();
    f.claim = Some("clippy reports it on a line the change adds: return 42;".into());
    f.location = Location {
        path: "src/lib.rs".into(),
        line: Some(2),
    };
    f.patch = None;
    let tool = |diagnostic: Option<&str>| ToolRef {
        analyzer: "clippy".into(),
        version: "clippy 0.1.95 (59807616e1 2026-04-14)".into(),
        code: "clippy::needless_return".into(),
        diagnostic: diagnostic.map(Into::into),
    };
    for (e, id) in f
        .evidence
        .iter_mut()
        .zip(["tool-base-run", "tool-change-run"])
    {
        e.kind = "tool_run".into();
        e.test = None;
        if let Some(r) = e.run.as_mut() {
            r.run_id = id.into();
        }
        e.tool = Some(tool(
            (id == "tool-change-run").then_some("src/lib.rs:2:5: unneeded `return` statement"),
        ));
    }
    f
}

#[test]
fn a_tool_finding_shows_its_analyzer_version_diagnostic_and_both_runs_in_every_format() {
    let mut report = sample();
    report.findings = vec![tool_finding()];
    report.seal();
    assert_eq!(report.proof_counts.tool, 1);
    let body = github_review(&report, None)["body"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for (name, out) in [
        ("text", render(&report, Format::Text, false)),
        ("markdown", render(&report, Format::Markdown, false)),
        ("html", render(&report, Format::Html, false)),
        ("sarif", render(&report, Format::Sarif, false)),
        ("json", render(&report, Format::Json, false)),
    ] {
        for words in [
            "clippy 0.1.95 (59807616e1 2026-04-14)",
            "unneeded `return` statement",
            "clippy::needless_return",
            "tool-base-run",
            "tool-change-run",
        ] {
            let shown = out.contains(words)
                || out.contains(&words.replace('`', "\\`"))
                || out.contains(&words.replace('`', "&#96;"));
            assert!(shown, "{name} does not show {words:?}:\n{out}");
        }
    }
    assert!(body.contains("clippy: unneeded"), "{body}");
    let md = render(&report, Format::Markdown, false);
    assert!(
        md.contains("the analyzer reports it on a line the change adds"),
        "{md}"
    );
    let sarif: serde_json::Value =
        serde_json::from_str(&render(&report, Format::Sarif, false)).expect("sarif");
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["properties"]["proof_level"], "tool");
    assert_eq!(
        result["properties"]["tool"]["code"], "clippy::needless_return",
        "{result:#}"
    );
}
