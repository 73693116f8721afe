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
        // A one-shot job (the advisory sync) has no health to check: it runs and exits.
        let one_shot = service["restart"] == "no";
        let test = strs(&service["healthcheck"]["test"]);
        assert!(
            test.len() > 1 || one_shot && service["healthcheck"]["disable"] == true,
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
                    .is_some_and(|c| c == "serve" || c == "worker")
                    || one_shot && command[..2] == ["db", "sync"],
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
fn kubernetes_manifests_hold_probes_resources_one_image_the_runner_and_the_sync() {
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

    // What `kubectl apply -k` would apply: the kustomization built (components included).
    let docs = kustomize("deploy/k8s");
    let named = |kind: &str, name: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
            .clone()
    };
    let mut families = BTreeSet::new();
    for doc in docs
        .iter()
        .filter(|d| matches!(d["kind"].as_str(), Some("Deployment" | "CronJob" | "Job")))
    {
        let name = doc["metadata"]["name"].as_str().unwrap_or_default();
        for c in containers(doc) {
            let pinned = format!(
                "{}:{}",
                images[0]["newName"].as_str().unwrap_or("proven"),
                images[0]["newTag"].as_str().unwrap_or_default()
            );
            assert_eq!(
                c["image"],
                pinned.as_str(),
                "{name}: the image kustomize pins"
            );
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

/// The documents `kubectl kustomize DIR` builds (kubectl's own kustomize, offline).
fn kustomize(rel: &str) -> Vec<Value> {
    let out = std::process::Command::new("kubectl")
        .arg("kustomize")
        .arg(root().join(rel))
        .output()
        .unwrap_or_else(|e| {
            panic!("kubectl kustomize: kubectl is needed to build deploy/k8s (it is not a Debian package: install it from Kubernetes' own packages): {e}")
        });
    assert!(
        out.status.success(),
        "kubectl kustomize {rel}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    text.split("\n---\n")
        .map(|d| serde_saphyr::from_str::<Value>(d).unwrap_or_else(|e| panic!("{rel}: {e}")))
        .collect()
}

/// Gauges every process exports with the same deployment-wide value (counted in the store):
/// summed across processes they multiply by the number of replicas.
const STORE_GAUGES: &[&str] = &[
    "proven_pipeline_queue_depth",
    "proven_pipeline_queue_oldest_seconds",
];

/// Whether every use of `metric` in the PromQL `expr` is the direct argument of `max` (or
/// `max by (...)`): the only aggregation across processes that keeps the true value.
fn aggregated_with_max(expr: &str, metric: &str) -> bool {
    let mut found = false;
    for (at, _) in expr.match_indices(metric) {
        found = true;
        let Some(before) = expr[..at].trim_end().strip_suffix('(') else {
            return false;
        };
        let mut before = before.trim_end();
        if let Some(grouped) = before.strip_suffix(')') {
            let Some(open) = grouped.rfind('(') else {
                return false;
            };
            let clause = grouped[..open].trim_end();
            let Some(clause) = clause
                .strip_suffix("by")
                .or_else(|| clause.strip_suffix("without"))
            else {
                return false;
            };
            before = clause.trim_end();
        }
        if !before.ends_with("max") {
            return false;
        }
    }
    found
}

#[test]
fn aggregated_with_max_reads_promql_as_meant() {
    let m = "proven_pipeline_queue_depth";
    assert!(aggregated_with_max(
        "max by (queue) (proven_pipeline_queue_depth{state=\"queued\"})",
        m
    ));
    assert!(aggregated_with_max(
        "sum(max by (queue, state) (proven_pipeline_queue_depth))",
        m
    ));
    assert!(aggregated_with_max("max(proven_pipeline_queue_depth)", m));
    assert!(!aggregated_with_max(
        "sum by (queue) (proven_pipeline_queue_depth)",
        m
    ));
    assert!(!aggregated_with_max("proven_pipeline_queue_depth", m));
    assert!(!aggregated_with_max("sum(proven_pipeline_queue_depth)", m));
}

#[test]
fn autoscaling_and_dashboards_read_the_store_counted_queue_depth_with_max_never_sum() {
    let docs = kustomize("deploy/k8s");
    let deployments: BTreeSet<String> = docs
        .iter()
        .filter(|d| d["kind"] == "Deployment")
        .filter(|d| {
            containers(d)
                .iter()
                .any(|c| strs(&c["args"]).first().map(String::as_str) == Some("worker"))
        })
        .filter_map(|d| d["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(deployments.len(), 3, "{deployments:?}");
    // One KEDA ScaledObject per worker family, on the catalogue's depth, read with max.
    let scaled: Vec<&Value> = docs
        .iter()
        .filter(|d| d["kind"] == "ScaledObject")
        .collect();
    let targets: BTreeSet<String> = scaled
        .iter()
        .filter_map(|s| {
            s["spec"]["scaleTargetRef"]["name"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(
        targets, deployments,
        "one ScaledObject per worker Deployment"
    );
    assert_eq!(scaled.len(), deployments.len());
    for object in &scaled {
        let name = &object["metadata"]["name"];
        let triggers = object["spec"]["triggers"].as_array().expect("triggers");
        assert!(!triggers.is_empty(), "{name}: no trigger");
        for trigger in triggers {
            assert_eq!(trigger["type"], "prometheus", "{name}");
            let query = trigger["metadata"]["query"].as_str().expect("query");
            assert!(
                aggregated_with_max(query, "proven_pipeline_queue_depth"),
                "{name}: the depth every process exports is read with max: {query}"
            );
            assert!(
                trigger["metadata"]["threshold"]
                    .as_str()
                    .is_some_and(|t| t.parse::<f64>().is_ok_and(|t| t > 0.0)),
                "{name}: a threshold"
            );
        }
        assert!(
            object["spec"]["fallback"]["replicas"].as_u64().is_some(),
            "{name}: a fallback"
        );
    }
    // The sandbox family scales to zero when idle, and counts running steps (a runner is not
    // taken from a test it runs).
    let sandbox = scaled
        .iter()
        .find(|s| s["spec"]["scaleTargetRef"]["name"] == "proven-sandbox-runner")
        .expect("the sandbox-runner's ScaledObject");
    assert_eq!(sandbox["spec"]["minReplicaCount"], 0);
    let query = sandbox["spec"]["triggers"][0]["metadata"]["query"]
        .as_str()
        .expect("query");
    assert!(
        query.contains("running") && query.contains("sandbox"),
        "{query}"
    );

    // The plain HPA is kept as the fallback component, on a metric of the catalogue, through
    // an adapter rule that takes the max across processes.
    let hpa = kustomize_component("deploy/k8s/autoscaling/hpa");
    let hpa = hpa
        .iter()
        .find(|d| d["kind"] == "HorizontalPodAutoscaler")
        .expect("the fallback HPA");
    let target = hpa["spec"]["scaleTargetRef"]["name"]
        .as_str()
        .expect("target");
    assert!(deployments.contains(target), "{target}");
    let metric = hpa["spec"]["metrics"][0]["external"]["metric"]["name"]
        .as_str()
        .expect("metric");
    assert!(
        catalogue().contains(metric),
        "{metric} is not in docs/metrics.md"
    );
    let adapter = &yaml_docs("deploy/k8s/autoscaling/hpa/prometheus-adapter.yaml")[0];
    let rule = adapter["rules"]["external"]
        .as_array()
        .and_then(|rules| rules.iter().find(|r| r["name"]["as"] == metric))
        .expect("an adapter rule for the HPA's metric");
    let query = rule["metricsQuery"].as_str().expect("metricsQuery");
    assert!(aggregated_with_max(query, "<<.Series>>"), "{query}");

    // The dashboards read every store-counted gauge with max.
    let mut dashboards = Vec::new();
    files(
        &root().join("deploy/grafana/dashboards"),
        "json",
        &mut dashboards,
    );
    let mut seen = 0;
    for file in dashboards {
        let text = std::fs::read_to_string(&file).expect("dashboard");
        let dashboard: Value = serde_json::from_str(&text).expect("json");
        for panel in dashboard["panels"].as_array().into_iter().flatten() {
            for target in panel["targets"].as_array().into_iter().flatten() {
                let expr = target["expr"].as_str().unwrap_or_default();
                for metric in STORE_GAUGES.iter().filter(|m| expr.contains(*m)) {
                    seen += 1;
                    assert!(
                        aggregated_with_max(expr, metric),
                        "{}: {metric} is read with max across processes, not: {expr}",
                        file.display()
                    );
                }
            }
        }
    }
    assert!(seen >= 2, "the dashboards show the queues");
}

/// A kustomize component's resources, built through a kustomization of its own.
fn kustomize_component(rel: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().expect("tempdir");
    let component = root().join(rel).canonicalize().expect("component");
    let resources = std::fs::read_dir(&component)
        .expect("component dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n == "kustomization.yaml"))
        .count();
    assert_eq!(resources, 1, "{rel} is a kustomization");
    // Kustomize loads only files under the kustomization's root: copy the component beside it.
    let copy = dir.path().join("component");
    std::fs::create_dir(&copy).expect("mkdir");
    for entry in std::fs::read_dir(&component)
        .expect("component dir")
        .flatten()
    {
        std::fs::copy(entry.path(), copy.join(entry.file_name())).expect("copy");
    }
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ncomponents: [component]\n",
    )
    .expect("write");
    let out = std::process::Command::new("kubectl")
        .arg("kustomize")
        .arg(dir.path())
        .output()
        .expect("kubectl kustomize (install kubectl)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .split("\n---\n")
        .map(|d| serde_saphyr::from_str::<Value>(d).expect("yaml"))
        .collect()
}

/// A dependency the workspace declares and no crate uses only misleads (and is one more
/// name to audit): every `[workspace.dependencies]` entry is some member's dependency.
#[test]
fn every_workspace_dependency_is_used_by_a_member() {
    let root_manifest = read("Cargo.toml");
    let section = root_manifest
        .split("[workspace.dependencies]")
        .nth(1)
        .expect("[workspace.dependencies]");
    let section = section.split("\n[").next().unwrap_or(section);
    let declared: BTreeSet<String> = section
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split(['=', ' ']).next())
        .map(str::to_string)
        .collect();
    assert!(declared.len() > 30, "{declared:?}");
    let mut manifests = Vec::new();
    files(&root(), "toml", &mut manifests);
    let mut used = BTreeSet::new();
    for manifest in manifests
        .iter()
        .filter(|m| m.ends_with("Cargo.toml") && **m != root().join("Cargo.toml"))
    {
        let text = std::fs::read_to_string(manifest).expect("manifest");
        for line in text.lines().map(str::trim) {
            if let Some((name, rest)) = line.split_once(['=', ' ', '.'])
                && (line.contains("workspace = true") || rest.starts_with("workspace"))
            {
                used.insert(name.trim().to_string());
            }
        }
    }
    let unused: Vec<_> = declared.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "declared in the workspace, used by no crate: {unused:?}"
    );
}

/// The value of `KEY` in a Compose service's environment (a mapping).
fn env_of<'a>(service: &'a Value, key: &str) -> Option<&'a str> {
    service["environment"][key].as_str()
}

/// The sandbox images a deployment names (`PROVEN_SANDBOX_IMAGES`), by language.
fn sandbox_images(list: &str) -> std::collections::BTreeMap<String, String> {
    list.split(',')
        .filter_map(|e| e.split_once('='))
        .map(|(l, i)| (l.trim().to_string(), i.trim().to_string()))
        .collect()
}

/// The image names deploy/sandbox/README.md's production build tags (`-t NAME:TAG`), with
/// `$lang` standing for each language.
fn sandbox_readme_images() -> BTreeSet<String> {
    let readme = read("deploy/sandbox/README.md");
    let line = readme
        .lines()
        .find(|l| l.contains("docker build") && l.contains("-t proven-sandbox-"))
        .expect("the production build command");
    let tagged = line
        .split_whitespace()
        .skip_while(|w| *w != "-t")
        .nth(1)
        .expect("-t NAME");
    ["python", "rust", "node", "go"]
        .iter()
        .map(|lang| tagged.replace("$lang", lang))
        .collect()
}

#[test]
fn compose_loads_advisories_once_passes_secrets_as_files_and_names_the_built_sandbox_images() {
    let compose = &yaml_docs("deploy/compose.yaml")[0];
    let services = compose["services"].as_object().expect("services");
    // A one-shot sync at `up`, through the same image, with the mounts it needs.
    let sync = &services["advisories"];
    assert_eq!(sync["restart"], "no", "a job, not a service");
    let command = strs(&sync["command"]);
    assert_eq!(&command[..2], ["db", "sync"], "{command:?}");
    assert!(command.len() > 3, "the sources: {command:?}");
    let volumes = strs(&sync["volumes"]);
    assert!(
        volumes.iter().any(|v| v.ends_with(":/advisories:ro")),
        "an offline sync reads /advisories: {volumes:?}"
    );
    for volume in volumes.iter().filter(|v| v.starts_with("./")) {
        let local = volume
            .trim_start_matches("./")
            .split(':')
            .next()
            .unwrap_or_default();
        assert!(
            root().join("deploy").join(local).exists(),
            "deploy/{local} exists"
        );
    }
    // Secrets are files: never a key's value in the file or the environment.
    let declared = compose["secrets"].as_object().expect("top-level secrets");
    for (name, secret) in declared {
        let file = secret["file"].as_str().unwrap_or_default();
        assert!(file.starts_with("./secrets/"), "{name}: {file}");
    }
    let gitignore = read("deploy/secrets/.gitignore");
    assert!(
        gitignore.lines().any(|l| l.trim() == "*"),
        "secrets never committed"
    );
    for (name, service) in services {
        if !service["image"]
            .as_str()
            .unwrap_or_default()
            .starts_with("proven")
        {
            continue;
        }
        let mounted: BTreeSet<String> = strs(&service["secrets"]).into_iter().collect();
        for var in [
            "PROVEN_GENERATOR_API_KEY",
            "PROVEN_SKEPTIC_API_KEY",
            "PROVEN_GUARDRAIL_API_KEY",
            "PROVEN_GITHUB_WEBHOOK_SECRET",
        ] {
            assert!(env_of(service, var).is_none(), "{name}: {var} inline");
            let path = env_of(service, &format!("{var}_FILE"))
                .unwrap_or_else(|| panic!("{name}: no {var}_FILE"));
            let secret = path
                .strip_prefix("/run/secrets/")
                .expect("a Compose secret");
            assert!(
                mounted.contains(secret) && declared.contains_key(secret),
                "{name}: {secret}"
            );
        }
        let key = env_of(service, "PROVEN_GITHUB_PRIVATE_KEY").expect("the App's key path");
        let secret = key.strip_prefix("/run/secrets/").expect("a Compose secret");
        assert!(mounted.contains(secret), "{name}: the App's key is mounted");
        // The sandbox images, as the sandbox README builds them.
        let images = sandbox_images(env_of(service, "PROVEN_SANDBOX_IMAGES").expect("images"));
        let named: BTreeSet<String> = images.values().cloned().collect();
        assert_eq!(named, sandbox_readme_images(), "{name}");
    }
}

#[test]
fn the_image_builds_without_target_ships_a_stripped_binary_and_owns_its_volumes() {
    let ignore = read(".dockerignore");
    for needed in ["target/", ".git/", "deploy/secrets/"] {
        assert!(
            ignore.lines().any(|l| l.trim() == needed),
            ".dockerignore lacks {needed}"
        );
    }
    let dockerfile = read("deploy/Dockerfile");
    let strip = dockerfile
        .find("--strip-all")
        .or_else(|| dockerfile.find("strip "))
        .expect("the binary is stripped");
    let copy = dockerfile
        .find("COPY --from=build")
        .expect("the binary is copied from the build stage");
    assert!(strip < copy, "stripped before it is copied");
    assert!(
        dockerfile.contains("--only-keep-debug"),
        "debug info split off"
    );
    // Every volume Compose mounts under the data directory exists in the image, owned by
    // the user that writes it (a new named volume takes the image directory's owner).
    let compose = &yaml_docs("deploy/compose.yaml")[0];
    for service in compose["services"].as_object().expect("services").values() {
        for volume in strs(&service["volumes"]) {
            if let Some((_, at)) = volume.split_once(':')
                && let Some(sub) = at.strip_prefix("/var/lib/proven/")
            {
                assert!(
                    dockerfile.contains(&format!("/var/lib/proven/{sub}")),
                    "{at} made in the image"
                );
            }
        }
    }
}

#[test]
fn kubernetes_loads_advisories_once_serves_the_webhook_over_tls_and_passes_every_secret() {
    let docs = kustomize("deploy/k8s");
    let find = |kind: &str, name: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
            .clone()
    };
    // The one-shot load beside the CronJob.
    let job = docs
        .iter()
        .find(|d| d["kind"] == "Job")
        .expect("a one-shot Job");
    let args = strs(&containers(job)[0]["args"]);
    assert_eq!(&args[..2], ["db", "sync"], "{args:?}");
    assert!(docs.iter().any(|d| d["kind"] == "CronJob"));
    // The Ingress: TLS by cert-manager, the webhook's path to the API's Service.
    let ingress = docs
        .iter()
        .find(|d| d["kind"] == "Ingress")
        .expect("an Ingress");
    let annotations = ingress["metadata"]["annotations"]
        .as_object()
        .expect("annotations");
    assert!(
        annotations
            .keys()
            .any(|k| k.starts_with("cert-manager.io/")),
        "{annotations:?}"
    );
    let tls = &ingress["spec"]["tls"][0];
    assert!(tls["secretName"].as_str().is_some_and(|s| !s.is_empty()));
    let host = tls["hosts"][0].as_str().expect("a TLS host");
    let rule = &ingress["spec"]["rules"][0];
    assert_eq!(rule["host"], host);
    let paths = rule["http"]["paths"].as_array().expect("paths");
    let webhook = paths
        .iter()
        .find(|p| p["path"] == "/v1/github/webhook")
        .expect("the webhook's path");
    let service = webhook["backend"]["service"]["name"]
        .as_str()
        .expect("service");
    find("Service", service);
    // Secrets: the model keys and the webhook secret from the Secret, the App's key mounted
    // where the ConfigMap says.
    let config = find("ConfigMap", "proven-config");
    let key_path = config["data"]["PROVEN_GITHUB_PRIVATE_KEY"]
        .as_str()
        .expect("key path");
    let key_dir = key_path.rsplit_once('/').expect("a path").0;
    for name in ["proven-worker-evidence", "proven-worker-model"] {
        let deployment = find("Deployment", name);
        let container = &containers(&deployment)[0];
        let env = serde_json::to_string(&container["env"]).expect("json");
        for var in [
            "PROVEN_GENERATOR_API_KEY",
            "PROVEN_SKEPTIC_API_KEY",
            "PROVEN_GUARDRAIL_API_KEY",
            "PROVEN_GITHUB_WEBHOOK_SECRET",
        ] {
            let entry = container["env"]
                .as_array()
                .and_then(|e| e.iter().find(|v| v["name"] == var))
                .unwrap_or_else(|| panic!("{name}: no {var} in {env}"));
            assert!(
                entry["valueFrom"]["secretKeyRef"].is_object(),
                "{name}: {var} from a Secret"
            );
        }
        let mount = container["volumeMounts"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["mountPath"] == key_dir))
            .unwrap_or_else(|| panic!("{name}: nothing mounted at {key_dir}"));
        let volume = deployment["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .and_then(|v| v.iter().find(|v| v["name"] == mount["name"]))
            .expect("the volume");
        assert!(
            volume["secret"]["secretName"].is_string(),
            "{name}: the key from a Secret"
        );
    }
    // The sandbox images, as the sandbox README builds them.
    let images = sandbox_images(
        config["data"]["PROVEN_SANDBOX_IMAGES"]
            .as_str()
            .expect("images"),
    );
    let named: BTreeSet<String> = images.values().cloned().collect();
    assert_eq!(named, sandbox_readme_images());
}

#[test]
fn the_readme_service_commands_start_every_family_the_sandbox_included() {
    let readme = read("README.md");
    let section = readme
        .split("### As a service")
        .nth(1)
        .and_then(|s| s.split("```sh").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("the service commands");
    assert!(
        section.lines().any(|l| l.starts_with("proven serve")),
        "{section}"
    );
    let served: BTreeSet<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("proven worker --steps "))
        .flat_map(|l| l.split_whitespace().next().unwrap_or_default().split(','))
        .collect();
    for family in ["evidence", "control", "model", "sandbox"] {
        assert!(
            served.contains(family),
            "no README command serves {family}: {section}"
        );
    }
}

#[test]
fn scripts_review_shows_the_build_progress() {
    let script = read("scripts/review");
    for line in script
        .lines()
        .filter(|l| l.trim_start().starts_with("cargo "))
    {
        assert!(
            !line.split_whitespace().any(|w| w == "-q" || w == "--quiet"),
            "the first build takes minutes: its progress is shown, not {line:?}"
        );
    }
}

/// On containerd nodes (no Docker socket), `deploy/k8s-containerd` gives the sandbox-runner a
/// Docker engine of its own in its pod: nothing of the node is mounted, the engine is ready
/// before the runner starts, the runner reaches it by PROVEN_SANDBOX_DOCKER_HOST, both see
/// the run directory at one path, the images are pulled first, and the isolation it gives
/// is written down.
#[test]
fn on_containerd_nodes_the_sandbox_runner_brings_its_own_engine() {
    let docs = kustomize("deploy/k8s-containerd");
    let runner = docs
        .iter()
        .find(|d| d["kind"] == "Deployment" && d["metadata"]["name"] == "proven-sandbox-runner")
        .expect("the sandbox-runner");
    let spec = &runner["spec"]["template"]["spec"];
    assert!(
        spec["nodeSelector"].is_null(),
        "any node: {}",
        spec["nodeSelector"]
    );
    let volumes = spec["volumes"].as_array().expect("volumes");
    assert!(
        volumes.iter().all(|v| v["hostPath"].is_null()),
        "nothing of the node is mounted: {volumes:?}"
    );
    let inits = spec["initContainers"].as_array().expect("init containers");
    let engine = inits
        .iter()
        .find(|c| c["restartPolicy"] == "Always")
        .expect("the engine as a native sidecar");
    assert!(
        engine["startupProbe"].is_object(),
        "ready before the runner starts"
    );
    let runner_c = &spec["containers"][0];
    let env = |c: &Value, name: &str| {
        c["env"]
            .as_array()
            .and_then(|e| e.iter().find(|v| v["name"] == name))
            .and_then(|v| v["value"].as_str())
            .map(str::to_string)
    };
    let host = env(runner_c, "PROVEN_SANDBOX_DOCKER_HOST").expect("the runner names the engine");
    let socket_dir = host
        .trim_start_matches("unix://")
        .rsplit_once('/')
        .expect("a socket path")
        .0
        .to_string();
    let tmpdir = env(runner_c, "TMPDIR").expect("TMPDIR");
    let mounts = |c: &Value| -> BTreeSet<(String, String)> {
        c["volumeMounts"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                (
                    m["name"].as_str().unwrap_or_default().to_string(),
                    m["mountPath"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    };
    let (engine_mounts, runner_mounts) = (mounts(engine), mounts(runner_c));
    for path in [&socket_dir, &tmpdir] {
        let shared = engine_mounts
            .iter()
            .any(|(n, p)| p == path && runner_mounts.contains(&(n.clone(), p.clone())));
        assert!(shared, "{path} is one volume in the engine and the runner");
    }
    let pull = inits
        .iter()
        .find(|c| c["restartPolicy"].is_null())
        .expect("an init container that pulls the images");
    let script = strs(&pull["command"]).join(" ");
    assert!(
        script.contains("PROVEN_SANDBOX_IMAGES") && script.contains("docker pull"),
        "{script}"
    );
    let notes = read("deploy/k8s-containerd/kustomization.yaml");
    assert!(
        notes.contains("Isolation:") && notes.contains("privileged"),
        "the isolation it gives is documented"
    );
}
