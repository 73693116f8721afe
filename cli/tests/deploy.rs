//! The deployment files cannot run here (no registry for Compose's images, no cluster), so
//! these tests parse them and check what they must hold: every service healthy by a check,
//! one image and tag for every Proven process, the sandbox-runner present with a container
//! runtime, Prometheus and Grafana wired, Kubernetes probes, resources, the autoscaler and
//! the sync CronJob; and the metrics catalogue (docs/metrics.md) against the code and the
//! dashboards.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every document of a YAML file (merge keys expanded).
fn yaml_docs(rel: &str) -> Vec<Value> {
    let text = read(rel);
    text.split("\n---\n")
        .filter(|d| {
            d.lines()
                .any(|l| !l.trim().is_empty() && !l.starts_with('#'))
        })
        .map(|d| serde_saphyr::from_str::<Value>(d).unwrap_or_else(|e| panic!("{rel}: {e}")))
        .collect()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn compose_runs_every_service_with_a_health_check_one_proven_image_and_a_sandbox_runner() {
    let compose = &yaml_docs("deploy/compose.yaml")[0];
    let services = compose["services"].as_object().expect("services");
    for name in [
        "postgres",
        "redis",
        "api",
        "evidence",
        "model",
        "sandbox",
        "prometheus",
        "grafana",
    ] {
        assert!(services.contains_key(name), "compose has no {name} service");
    }
    let mut proven_images = BTreeSet::new();
    for (name, service) in services {
        let test = strs(&service["healthcheck"]["test"]);
        assert!(
            test.len() > 1,
            "service {name} has no health check: {service:#}"
        );
        let image = service["image"].as_str().unwrap_or_default();
        assert!(!image.is_empty(), "service {name} names no image");
        assert!(
            image.contains(':') && !image.ends_with(":latest") || image.starts_with("proven:"),
            "service {name}: a peer image is pinned to a version, not {image}"
        );
        if image.starts_with("proven") {
            proven_images.insert(image.to_string());
            let command = strs(&service["command"]);
            assert!(
                command
                    .first()
                    .is_some_and(|c| c == "serve" || c == "worker"),
                "service {name} runs {command:?}"
            );
        }
    }
    assert_eq!(
        proven_images.len(),
        1,
        "every Proven process runs the same image and tag: {proven_images:?}"
    );
    // Every queue family is served by some worker.
    let served: BTreeSet<String> = services
        .values()
        .filter_map(|s| {
            let c = strs(&s["command"]);
            (c.first().map(String::as_str) == Some("worker")).then(|| c.get(2).cloned())?
        })
        .flat_map(|steps| steps.split(',').map(str::to_string).collect::<Vec<_>>())
        .collect();
    for family in ["evidence", "control", "model", "sandbox"] {
        assert!(
            served.contains(family),
            "no worker serves {family}: {served:?}"
        );
    }
    // The sandbox-runner reaches a container runtime and shares its run directory with it.
    let sandbox = &services["sandbox"];
    let volumes = strs(&sandbox["volumes"]);
    assert!(
        volumes
            .iter()
            .any(|v| v.starts_with("/var/run/docker.sock:")),
        "{volumes:?}"
    );
    let tmpdir = sandbox["environment"]["TMPDIR"].as_str().expect("TMPDIR");
    assert!(
        volumes.contains(&format!("{tmpdir}:{tmpdir}")),
        "the run directory is mounted at its own path: {volumes:?}"
    );
    // Prometheus scrapes the API and the workers' metrics listener; Grafana is provisioned
    // from files that exist.
    let prometheus = &yaml_docs("deploy/prometheus/prometheus.yml")[0];
    let scraped = serde_json::to_string(&prometheus["scrape_configs"]).expect("json");
    assert!(scraped.contains("api:8080"), "{scraped}");
    assert!(scraped.contains("9464"), "{scraped}");
    for service in ["prometheus", "grafana"] {
        for volume in strs(&services[service]["volumes"]) {
            if let Some(local) = volume.strip_prefix("./") {
                let local = local.split(':').next().unwrap_or_default();
                assert!(
                    root().join("deploy").join(local).exists(),
                    "{service} mounts deploy/{local}, which does not exist"
                );
            }
        }
    }
    let datasource = &yaml_docs("deploy/grafana/provisioning/datasources/prometheus.yaml")[0];
    assert_eq!(datasource["datasources"][0]["uid"], "prometheus");
}

/// Every container of a workload (Deployment or CronJob).
fn containers(doc: &Value) -> Vec<Value> {
    let spec = match doc["kind"].as_str() {
        Some("CronJob") => &doc["spec"]["jobTemplate"]["spec"]["template"]["spec"],
        _ => &doc["spec"]["template"]["spec"],
    };
    spec["containers"].as_array().cloned().unwrap_or_default()
}

#[test]
fn kubernetes_manifests_hold_probes_resources_one_image_the_runner_the_autoscaler_and_the_sync() {
    let dir = root().join("deploy/k8s");
    let kustomization = &yaml_docs("deploy/k8s/kustomization.yaml")[0];
    let listed: BTreeSet<String> = strs(&kustomization["resources"]).into_iter().collect();
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .expect("deploy/k8s")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".yaml") && n != "kustomization.yaml")
        .collect();
    assert_eq!(listed, files, "kustomization.yaml lists every manifest");
    let images = kustomization["images"].as_array().expect("images");
    assert_eq!(images.len(), 1, "one image for every Proven workload");
    assert!(images[0]["newTag"].as_str().is_some_and(|t| !t.is_empty()));

    let docs: Vec<Value> = files
        .iter()
        .flat_map(|f| yaml_docs(&format!("deploy/k8s/{f}")))
        .collect();
    let named = |kind: &str, name: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
            .clone()
    };
    let mut families = BTreeSet::new();
    for doc in docs
        .iter()
        .filter(|d| matches!(d["kind"].as_str(), Some("Deployment" | "CronJob")))
    {
        let name = doc["metadata"]["name"].as_str().unwrap_or_default();
        for c in containers(doc) {
            assert_eq!(c["image"], "proven", "{name}: the image kustomize pins");
            for bound in ["requests", "limits"] {
                for resource in ["cpu", "memory"] {
                    assert!(
                        !c["resources"][bound][resource].is_null(),
                        "{name}: no resources.{bound}.{resource}"
                    );
                }
            }
            let args = strs(&c["args"]);
            if doc["kind"] == "Deployment" {
                for probe in ["livenessProbe", "readinessProbe"] {
                    assert!(c[probe].is_object(), "{name}: no {probe}");
                }
                if args.first().map(String::as_str) == Some("worker") {
                    families.extend(args[2].split(',').map(str::to_string));
                }
            }
        }
    }
    for family in ["evidence", "control", "model", "sandbox"] {
        assert!(families.contains(family), "no worker serves {family}");
    }

    // The sandbox-runner only on nodes with a container runtime, with its socket.
    let runner = named("Deployment", "proven-sandbox-runner");
    let selector = runner["spec"]["template"]["spec"]["nodeSelector"]
        .as_object()
        .expect("nodeSelector");
    assert!(selector.keys().any(|k| k.contains("container-runtime")));
    let volumes =
        serde_json::to_string(&runner["spec"]["template"]["spec"]["volumes"]).expect("json");
    assert!(volumes.contains("/var/run/docker.sock"), "{volumes}");

    // The autoscaler scales a Deployment that exists, on a metric of the catalogue.
    let hpa = named("HorizontalPodAutoscaler", "proven-worker-evidence");
    let target = hpa["spec"]["scaleTargetRef"]["name"]
        .as_str()
        .expect("target");
    named("Deployment", target);
    let metric = hpa["spec"]["metrics"][0]["external"]["metric"]["name"]
        .as_str()
        .expect("metric");
    assert!(
        catalogue().contains(metric),
        "{metric} is not in docs/metrics.md"
    );

    // The sync runs on a schedule, one at a time.
    let cron = named("CronJob", "proven-advisory-sync");
    assert!(
        cron["spec"]["schedule"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    assert_eq!(cron["spec"]["concurrencyPolicy"], "Forbid");
    let args = strs(&containers(&cron)[0]["args"]);
    assert_eq!(&args[..2], ["db", "sync"], "{args:?}");
    assert!(
        args.iter().any(|a| a == "--rereview"),
        "each sync re-reviews what it newly affects: {args:?}"
    );
}

/// The names of docs/metrics.md's catalogue table.
fn catalogue() -> BTreeSet<String> {
    read("docs/metrics.md")
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .filter(|n| n.starts_with("proven_"))
        .map(str::to_string)
        .collect()
}

/// `proven_…` metric names in a text: identifiers, optionally quoted.
fn metric_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(at) = text[i..].find("proven_") {
        let start = i + at;
        let before = start.checked_sub(1).map(|b| bytes[b]);
        let mut end = start;
        while end < bytes.len() && (bytes[end].is_ascii_lowercase() || bytes[end] == b'_') {
            end += 1;
        }
        if !before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            names.insert(text[start..end].to_string());
        }
        i = end.max(start + 1);
    }
    names
}

/// Files below `dir` with `ext`, skipping build output.
fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != "tests" && name != "benches" {
                files(&path, ext, out);
            }
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

#[test]
fn the_metrics_catalogue_is_what_the_code_emits_and_all_the_dashboards_query() {
    let catalogue = catalogue();
    assert!(catalogue.len() >= 20, "{catalogue:?}");
    // The names the code declares: string literals of the metric-name shape in the
    // sources of every crate (tests and benches excluded: they name test fixtures).
    let mut sources = Vec::new();
    for dir in ["api", "cli/src", "worker", "sandbox-runner/src", "shared"] {
        files(&root().join(dir), "rs", &mut sources);
    }
    let mut emitted = BTreeSet::new();
    for file in &sources {
        let text = std::fs::read_to_string(file).expect("source");
        for name in metric_names(&text) {
            if text.contains(&format!("\"{name}\"")) {
                emitted.insert(name);
            }
        }
    }
    let undocumented: Vec<_> = emitted.difference(&catalogue).collect();
    assert!(
        undocumented.is_empty(),
        "emitted, not in docs/metrics.md: {undocumented:?}"
    );
    let unemitted: Vec<_> = catalogue.difference(&emitted).collect();
    assert!(
        unemitted.is_empty(),
        "in docs/metrics.md, never emitted: {unemitted:?}"
    );

    let mut dashboards = Vec::new();
    files(
        &root().join("deploy/grafana/dashboards"),
        "json",
        &mut dashboards,
    );
    for name in ["service-health", "review-flow", "evidence-quality", "cost"] {
        assert!(
            dashboards
                .iter()
                .any(|d| d.ends_with(format!("{name}.json"))),
            "no {name} dashboard"
        );
    }
    for file in dashboards {
        let dashboard: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).expect("dashboard"))
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let panels = dashboard["panels"].as_array().expect("panels");
        assert!(!panels.is_empty(), "{}", file.display());
        for panel in panels {
            assert_eq!(panel["datasource"]["uid"], "prometheus");
            let targets = panel["targets"].as_array().expect("targets");
            assert!(
                !targets.is_empty(),
                "{}: {}",
                file.display(),
                panel["title"]
            );
            for target in targets {
                let expr = target["expr"].as_str().expect("expr");
                let queried = metric_names(expr);
                assert!(!queried.is_empty() || expr.starts_with("up"), "{expr}");
                for name in queried {
                    let base = ["_bucket", "_sum", "_count"]
                        .iter()
                        .find_map(|s| name.strip_suffix(s))
                        .filter(|b| catalogue.contains(*b))
                        .unwrap_or(&name);
                    assert!(
                        catalogue.contains(base),
                        "{}: {name} is not in the catalogue",
                        file.display()
                    );
                }
            }
        }
    }
}
