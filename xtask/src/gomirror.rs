//! `cargo xtask gomirror --repos DIR --out DIR SOURCE…`: a static Go module proxy (the
//! GOPROXY protocol's files: `MODULE/@v/list`, `VERSION.info`, `.mod`, `.zip`) built from
//! the modules' own git repositories, for a machine that reaches no module proxy (this
//! workplace reaches crates.io, PyPI, npm and Debian only). An operator in that position
//! serves the directory over HTTP and names it in `PROVEN_SANDBOX_GOPROXY` and
//! `PROVEN_SANDBOX_REGISTRIES` (docs/suites-at-head.md shows how).
//!
//! Each SOURCE is a git directory (its `HEAD`'s go.sum is read) or a go.sum file. Every
//! `MODULE VERSION` there is made from its repository (`DIR/OWNER+NAME/repo`, as the fetch
//! tool leaves them) as the go command makes a module zip from a tag or a commit (the
//! module's directory, nested modules, vendored packages, symlinks and submodules left
//! out; the root LICENSE added to a module in a subdirectory that has none), and **served
//! only when its `h1:` hash equals the go.sum line**: a zip the tool made wrongly is never
//! served, and what could not be made is listed by reason.
//!
//! Why it is written here: the go command builds such zips only while downloading through
//! a proxy or a VCS host it can reach (neither is reachable here), and golang.org/x/mod's
//! zip package is Go, not a crate.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::{Digest, Sha256};

pub fn usage() -> &'static str {
    "cargo xtask gomirror --repos DIR --out DIR SOURCE… (SOURCE: a git directory whose HEAD has go.sum, or a go.sum file)"
}

/// One module version go.sum names, with the hashes it gives.
#[derive(Default)]
struct Wanted {
    zip: Option<String>,
    mod_: Option<String>,
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut repos = None;
    let mut out = None;
    let mut sources = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--repos" => repos = it.next().map(PathBuf::from),
            "--out" => out = it.next().map(PathBuf::from),
            _ if arg.starts_with("--") => {
                return Err(format!("gomirror: unknown option {arg}; {}", usage()));
            }
            _ => sources.push(PathBuf::from(arg)),
        }
    }
    let (Some(repos), Some(out)) = (repos, out) else {
        return Err(usage().to_string());
    };
    if sources.is_empty() {
        return Err(usage().to_string());
    }
    let mut wanted: BTreeMap<(String, String), Wanted> = BTreeMap::new();
    for source in &sources {
        let text = read_gosum(source)?;
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            let (Some(module), Some(version), Some(hash)) =
                (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let (version, is_mod) = match version.strip_suffix("/go.mod") {
                Some(v) => (v, true),
                None => (version, false),
            };
            let entry = wanted
                .entry((module.to_string(), version.to_string()))
                .or_default();
            if is_mod {
                entry.mod_ = Some(hash.to_string());
            } else {
                entry.zip = Some(hash.to_string());
            }
        }
    }
    let mut served = 0;
    let mut missing: Vec<String> = Vec::new();
    let mut lists: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for ((module, version), hashes) in &wanted {
        match make(&repos, module, version, hashes) {
            Ok(made) => {
                write_version(&out, module, version, &made)?;
                if !version.contains('-') || made.zip.is_some() {
                    lists
                        .entry(module.clone())
                        .or_default()
                        .insert(version.clone());
                }
                served += 1;
            }
            Err(why) => missing.push(format!("{module}@{version}: {why}")),
        }
    }
    for (module, versions) in &lists {
        let dir = out.join(escape(module)).join("@v");
        let list: String = versions
            .iter()
            .filter(|v| !is_pseudo(v))
            .map(|v| format!("{v}\n"))
            .collect();
        std::fs::write(dir.join("list"), list)
            .map_err(|e| format!("write {}: {e}", dir.display()))?;
    }
    eprintln!(
        "xtask: gomirror: {served} of {} module versions served from {}",
        wanted.len(),
        out.display()
    );
    for line in &missing {
        eprintln!("xtask: gomirror: not served: {line}");
    }
    Ok(())
}

fn read_gosum(source: &Path) -> Result<String, String> {
    if source.is_file() {
        return std::fs::read_to_string(source)
            .map_err(|e| format!("read {}: {e}", source.display()));
    }
    let repo = git2::Repository::open_bare(source)
        .or_else(|_| git2::Repository::open(source))
        .map_err(|e| {
            format!(
                "{}: not a git directory or a go.sum file: {e}",
                source.display()
            )
        })?;
    let tree = repo
        .head()
        .and_then(|h| h.peel_to_tree())
        .map_err(|e| format!("{}: HEAD: {e}", source.display()))?;
    let entry = tree
        .get_path(Path::new("go.sum"))
        .map_err(|_| format!("{}: HEAD has no go.sum", source.display()))?;
    let blob = repo.find_blob(entry.id()).map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(blob.content()).into_owned())
}

/// What is served for one module version.
struct Made {
    mod_file: Vec<u8>,
    zip: Option<Vec<u8>>,
    time: String,
}

/// The repository (`OWNER/NAME`) and the path inside it (before any major-version
/// directory) a module path comes from. Vanity hosts by their published `go-import` tags.
fn repository_of(module: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = module.split('/').collect();
    let join = |from: usize| parts.get(from..).map(|p| p.join("/")).unwrap_or_default();
    match parts.as_slice() {
        ["github.com", owner, name, ..] => Some((format!("{owner}/{name}"), join(3))),
        ["golang.org", "x", name, ..] => Some((format!("golang/{name}"), join(3))),
        ["google.golang.org", "protobuf", ..] => {
            Some(("protocolbuffers/protobuf-go".into(), join(2)))
        }
        ["google.golang.org", "grpc", ..] => Some(("grpc/grpc-go".into(), join(2))),
        ["go.yaml.in", "yaml", ..] => Some(("yaml/go-yaml".into(), join(2))),
        ["go.mongodb.org", "mongo-driver", ..] => Some(("mongodb/mongo-go-driver".into(), join(2))),
        ["go.uber.org", name, ..] => Some((format!("uber-go/{name}"), join(2))),
        ["google.golang.org", "api", ..] => {
            Some(("googleapis/google-api-go-client".into(), join(2)))
        }
        ["google.golang.org", "genproto", ..] => Some(("googleapis/go-genproto".into(), join(2))),
        ["google.golang.org", "appengine", ..] => Some(("golang/appengine".into(), join(2))),
        ["cloud.google.com", "go", ..] => Some(("googleapis/google-cloud-go".into(), join(2))),
        ["go.opentelemetry.io", "otel", ..] => {
            Some(("open-telemetry/opentelemetry-go".into(), join(2)))
        }
        ["go.opentelemetry.io", "contrib", ..] => {
            Some(("open-telemetry/opentelemetry-go-contrib".into(), join(2)))
        }
        ["go.opentelemetry.io", "auto", ..] => Some((
            "open-telemetry/opentelemetry-go-instrumentation".into(),
            join(2),
        )),
        ["go.opentelemetry.io", "proto", "otlp", ..] => {
            Some(("open-telemetry/opentelemetry-proto-go".into(), join(2)))
        }
        ["go.opencensus.io", ..] => Some(("census-instrumentation/opencensus-go".into(), join(1))),
        ["k8s.io", name, ..] => Some((format!("kubernetes/{name}"), join(2))),
        ["sigs.k8s.io", name, ..] => Some((format!("kubernetes-sigs/{name}"), join(2))),
        ["gonum.org", "v1", name, ..] => Some((format!("gonum/{name}"), join(3))),
        ["rsc.io", name, ..] => Some((format!("rsc/{name}"), join(2))),
        ["honnef.co", "go", "tools", ..] => Some(("dominikh/go-tools".into(), join(3))),
        ["gocloud.dev", ..] => Some(("google/go-cloud".into(), join(1))),
        ["cel.dev", "expr", ..] => Some(("google/cel-spec".into(), join(2))),
        ["gvisor.dev", "gvisor", ..] => Some(("google/gvisor".into(), join(2))),
        ["golang.zx2c4.com", "wireguard", ..] => Some(("WireGuard/wireguard-go".into(), join(2))),
        ["golang.zx2c4.com", "wintun", ..] => Some(("WireGuard/wintun-go".into(), join(2))),
        ["howett.net", "plist", ..] => Some(("DHowett/go-plist".into(), join(2))),
        ["software.sslmate.com", "src", "go-pkcs12", ..] => {
            Some(("SSLMate/go-pkcs12".into(), join(3)))
        }
        ["gorgonia.org", name, ..] => Some((format!("gorgonia/{name}"), join(2))),
        ["go4.org", "unsafe", "assume-no-moving-gc", ..] => {
            Some(("go4org/unsafe-assume-no-moving-gc".into(), join(3)))
        }
        ["nullprogram.com", "x", "optparse", ..] => Some(("skeeto/optparse-go".into(), join(3))),
        ["filippo.io", name, ..] => Some((format!("FiloSottile/{name}"), join(2))),
        ["gopkg.in", user, pkg] if pkg.contains(".v") => {
            let name = pkg.split(".v").next().unwrap_or(pkg);
            Some((format!("{user}/{name}"), String::new()))
        }
        ["gopkg.in", pkg] => {
            let name = pkg.split(".v").next().unwrap_or(pkg);
            Some((format!("go-{name}/{name}"), String::new()))
        }
        _ => None,
    }
}

fn is_pseudo(version: &str) -> bool {
    // vX.Y.Z-yyyymmddhhmmss-abcdefabcdef, vX.Y.Z-pre.0.yyyymmddhhmmss-…, vX.Y.(Z+1)-0.…
    let base = version.trim_end_matches("+incompatible");
    let Some((_, rev)) = base.rsplit_once('-') else {
        return false;
    };
    rev.len() == 12
        && rev.bytes().all(|b| b.is_ascii_hexdigit())
        && base.len() > 28
        && base[..base.len() - 13]
            .rsplit(['-', '.'])
            .next()
            .is_some_and(|t| t.len() == 14 && t.bytes().all(|b| b.is_ascii_digit()))
}

/// The fetched repository of `repo_name` under `repos` (bare, or with its `repo` folder).
fn open_repository(repos: &Path, repo_name: &str) -> Result<git2::Repository, String> {
    let dir = repos.join(repo_name.replace('/', "+"));
    let git_dir = if dir.join("repo").exists() {
        dir.join("repo")
    } else {
        dir
    };
    git2::Repository::open_bare(&git_dir)
        .or_else(|_| git2::Repository::open(&git_dir))
        .map_err(|_| {
            format!(
                "repository {repo_name} not fetched into {}",
                git_dir.display()
            )
        })
}

/// The commit a module version names: a pseudo-version's hash, else the tag (under the
/// module's folder prefix).
fn version_commit<'r>(
    repo: &'r git2::Repository,
    repo_name: &str,
    prefix: &str,
    version: &str,
) -> Result<git2::Commit<'r>, String> {
    let bare = version.trim_end_matches("+incompatible");
    if is_pseudo(version) {
        let hash = &bare[bare.len() - 12..];
        repo.revparse_single(hash)
            .and_then(|o| o.peel_to_commit())
            .map_err(|_| format!("commit {hash} not in the fetched {repo_name}"))
    } else {
        let tag = if prefix.is_empty() {
            bare.to_string()
        } else {
            format!("{prefix}/{bare}")
        };
        repo.revparse_single(&format!("refs/tags/{tag}"))
            .and_then(|o| o.peel_to_commit())
            .map_err(|_| format!("tag {tag} not in the fetched {repo_name}"))
    }
}

fn make(repos: &Path, module: &str, version: &str, hashes: &Wanted) -> Result<Made, String> {
    let (repo_name, rel) =
        repository_of(module).ok_or("no repository known for this module path")?;
    let repo = open_repository(repos, &repo_name)?;
    // The major-version suffix: /vN of the module path (gopkg.in's .vN is its own).
    let (prefix, major) = match rel.rsplit_once('/') {
        Some((p, m)) if is_major(m) => (p.to_string(), Some(m.to_string())),
        None if is_major(&rel) => (String::new(), Some(rel.clone())),
        _ => (rel.clone(), None),
    };
    let commit = version_commit(&repo, &repo_name, &prefix, version)?;
    let tree = commit.tree().map_err(|e| e.to_string())?;
    // The module's directory: the major-version directory when it holds this module's
    // go.mod, else the prefix (a major branch).
    let join = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_string()
        } else {
            format!("{a}/{b}")
        }
    };
    let mut candidates = Vec::new();
    if let Some(m) = &major {
        candidates.push(join(&prefix, m));
    }
    candidates.push(prefix.clone());
    // A version go.sum hashes only the go.mod of is still served whole where its files are
    // here, as a proxy serves it (`go mod download` of a module graph without pruning, a
    // go 1.12 module's, fetches those zips too); unverified, as go.sum has no hash for it.
    let (files, whole) = match tree_files(&repo, &tree, false) {
        Ok(files) => (files, true),
        Err(_) if hashes.zip.is_none() => (tree_files(&repo, &tree, true)?, false),
        Err(e) => return Err(e),
    };
    let code_dir = candidates
        .iter()
        .find(|d| {
            files
                .get(&join(d, "go.mod"))
                .is_some_and(|b| declares(b, module))
        })
        .cloned()
        .unwrap_or(prefix.clone());
    // A go.mod naming another path of the same major version is served as written, as
    // the go command serves it (a fork used by `replace`: fatedier/yamux's go.mod says
    // hashicorp/yamux, and go.sum hashes that file).
    let go_mod = files
        .get(&join(&code_dir, "go.mod"))
        .filter(|b| declares(b, module) || declares_same_major(b, module))
        .cloned();
    let mod_file = match &go_mod {
        Some(b) => b.clone(),
        None => format!("module {module}\n").into_bytes(),
    };
    if let Some(want) = &hashes.mod_ {
        // The go.mod hash names the file plainly (modfetch.HashGoMod), the zip's by prefix.
        let got = hash1(&[("go.mod".to_string(), mod_file.clone())]);
        if &got != want {
            return Err(format!("go.mod hash {got} is not go.sum's {want}"));
        }
    }
    let zip = match &hashes.zip {
        None if whole => Some(zip_of(&module_files(&files, &code_dir, module, version))?),
        None => None,
        Some(want) => {
            let entries = module_files(&files, &code_dir, module, version);
            let got = hash1(&entries);
            if &got != want {
                return Err(format!(
                    "zip hash {got} is not go.sum's {want} ({} files)",
                    entries.len()
                ));
            }
            Some(zip_of(&entries)?)
        }
    };
    let when = commit.time().seconds();
    let time = time::OffsetDateTime::from_unix_timestamp(when)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default();
    Ok(Made {
        mod_file,
        zip,
        time,
    })
}

fn is_major(segment: &str) -> bool {
    segment
        .strip_prefix('v')
        .is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n >= 2))
}

fn declares(go_mod: &[u8], module: &str) -> bool {
    String::from_utf8_lossy(go_mod).lines().any(|l| {
        let l = l.trim();
        l.strip_prefix("module")
            .is_some_and(|rest| rest.trim().trim_matches('"') == module)
    })
}

/// Whether a go.mod declares a module path (any) with the same major-version suffix as
/// `module`'s (none, or the same `/vN`): the only check the go command makes of a go.mod's
/// path when it makes a module from a repository.
fn declares_same_major(go_mod: &[u8], module: &str) -> bool {
    let major = |path: &str| {
        path.rsplit_once('/')
            .map(|(_, last)| last.to_string())
            .filter(|last| is_major(last))
    };
    String::from_utf8_lossy(go_mod).lines().any(|l| {
        l.trim()
            .strip_prefix("module ")
            .map(|rest| rest.trim().trim_matches('"'))
            .is_some_and(|declared| !declared.is_empty() && major(declared) == major(module))
    })
}

/// Every regular file of the tree, by path (symlinks and submodules are left out, as the
/// go command leaves them out of a module zip); only the go.mod files when no zip is
/// wanted (a version go.sum names by its go.mod alone needs no other blob, and a
/// snapshot may lack a large one).
fn tree_files(
    repo: &git2::Repository,
    tree: &git2::Tree<'_>,
    go_mods_only: bool,
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut files = BTreeMap::new();
    let mut failed = None;
    tree.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
        if entry.kind() == Some(git2::ObjectType::Blob)
            && entry.filemode() != 0o120000
            && (!go_mods_only || entry.name() == Ok("go.mod"))
        {
            let path = format!("{root}{}", entry.name().unwrap_or_default());
            match repo.find_blob(entry.id()) {
                Ok(blob) => {
                    files.insert(path, blob.content().to_vec());
                }
                Err(e) => failed = Some(e.to_string()),
            }
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(|e| e.to_string())?;
    match failed {
        Some(e) => Err(e),
        None => Ok(files),
    }
}

/// The files of the module zip, named `MODULE@VERSION/PATH` (golang.org/x/mod/zip's rules:
/// only the module's directory, no nested module, no vendored package; cmd/go adds the
/// repository's LICENSE to a module in a subdirectory that has none).
fn module_files(
    files: &BTreeMap<String, Vec<u8>>,
    code_dir: &str,
    module: &str,
    version: &str,
) -> Vec<(String, Vec<u8>)> {
    let under = |p: &str| -> Option<String> {
        if code_dir.is_empty() {
            Some(p.to_string())
        } else {
            p.strip_prefix(code_dir)
                .and_then(|r| r.strip_prefix('/'))
                .map(str::to_string)
        }
    };
    let nested: Vec<String> = files
        .keys()
        .filter_map(|p| under(p))
        .filter_map(|r| r.strip_suffix("/go.mod").map(|d| format!("{d}/")))
        .collect();
    let mut out: Vec<(String, Vec<u8>)> = files
        .iter()
        .filter_map(|(p, b)| under(p).map(|r| (r, b)))
        .filter(|(r, _)| !nested.iter().any(|d| r.starts_with(d.as_str())))
        .filter(|(r, _)| !is_vendored(r))
        .map(|(r, b)| (format!("{module}@{version}/{r}"), b.clone()))
        .collect();
    let license = format!("{module}@{version}/LICENSE");
    if !code_dir.is_empty()
        && !out.iter().any(|(n, _)| *n == license)
        && let Some(b) = files.get("LICENSE")
    {
        out.push((license, b.clone()));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// golang.org/x/mod/zip's isVendoredPackage, offset quirk included (changing it would
/// change every module's checksum).
fn is_vendored(name: &str) -> bool {
    let i = if name.starts_with("vendor/") {
        "vendor/".len()
    } else if name.contains("/vendor/") {
        "/vendor/".len()
    } else {
        return false;
    };
    name.get(i..).is_some_and(|rest| rest.contains('/'))
}

/// dirhash.Hash1: SHA-256 over the lines `SHA256HEX  NAME\n` of the files sorted by name.
fn hash1(files: &[(String, Vec<u8>)]) -> String {
    let mut sorted: Vec<&(String, Vec<u8>)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut summary = Sha256::new();
    for (name, body) in sorted {
        let digest = Sha256::digest(body);
        summary.update(format!("{}  {name}\n", hex(&digest)));
    }
    format!(
        "h1:{}",
        base64::engine::general_purpose::STANDARD.encode(summary.finalize())
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn zip_of(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, body) in files {
        zip.start_file(name.as_str(), options)
            .map_err(|e| e.to_string())?;
        zip.write_all(body).map_err(|e| e.to_string())?;
    }
    zip.finish()
        .map(|c| c.into_inner())
        .map_err(|e| e.to_string())
}

/// The proxy protocol's case encoding: an upper-case letter is `!` and its lower case.
fn escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_ascii_uppercase() {
                vec!['!', c.to_ascii_lowercase()]
            } else {
                vec![c]
            }
        })
        .collect()
}

fn write_version(out: &Path, module: &str, version: &str, made: &Made) -> Result<(), String> {
    let dir = out.join(escape(module)).join("@v");
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let v = escape(version);
    let write = |name: String, body: &[u8]| {
        std::fs::write(dir.join(&name), body)
            .map_err(|e| format!("write {}/{name}: {e}", dir.display()))
    };
    write(format!("{v}.mod"), &made.mod_file)?;
    let info = serde_json::json!({ "Version": version, "Time": made.time });
    write(format!("{v}.info"), info.to_string().as_bytes())?;
    if let Some(zip) = &made.zip {
        write(format!("{v}.zip"), zip)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths_name_their_repositories() {
        let r = |m: &str| repository_of(m).map(|(a, b)| format!("{a}:{b}"));
        assert_eq!(
            r("github.com/bytedance/sonic/loader").as_deref(),
            Some("bytedance/sonic:loader")
        );
        assert_eq!(
            r("github.com/cpuguy83/go-md2man/v2").as_deref(),
            Some("cpuguy83/go-md2man:v2")
        );
        assert_eq!(r("gopkg.in/yaml.v3").as_deref(), Some("go-yaml/yaml:"));
        assert_eq!(r("gopkg.in/check.v1").as_deref(), Some("go-check/check:"));
        assert_eq!(r("go.yaml.in/yaml/v3").as_deref(), Some("yaml/go-yaml:v3"));
        assert_eq!(r("golang.org/x/sys").as_deref(), Some("golang/sys:"));
        assert_eq!(
            r("cloud.google.com/go/storage").as_deref(),
            Some("googleapis/google-cloud-go:storage")
        );
        assert_eq!(
            r("go.opentelemetry.io/otel/sdk/metric").as_deref(),
            Some("open-telemetry/opentelemetry-go:sdk/metric")
        );
        assert_eq!(
            r("k8s.io/client-go").as_deref(),
            Some("kubernetes/client-go:")
        );
        assert_eq!(r("gonum.org/v1/gonum").as_deref(), Some("gonum/gonum:"));
        assert_eq!(r("rsc.io/quote/v3").as_deref(), Some("rsc/quote:v3"));
        assert_eq!(r("example.com/unknown"), None);
    }

    #[test]
    fn a_forks_go_mod_is_served_when_its_major_version_matches() {
        let yamux = b"module github.com/hashicorp/yamux\n\ngo 1.23\n";
        assert!(declares_same_major(yamux, "github.com/fatedier/yamux"));
        assert!(!declares_same_major(yamux, "github.com/fatedier/yamux/v2"));
        let v2 = b"module github.com/a/b/v2\n";
        assert!(declares_same_major(v2, "github.com/c/b/v2"));
        assert!(!declares_same_major(v2, "github.com/c/b"));
        assert!(!declares_same_major(b"go 1.21\n", "github.com/c/b"));
    }

    #[test]
    fn pseudo_versions_and_escapes() {
        assert!(is_pseudo("v0.0.0-20180306012644-bacd9c7ef1dd"));
        assert!(is_pseudo("v1.2.4-0.20191010101010-abcdefabcdef"));
        assert!(!is_pseudo("v1.1.12"));
        assert!(!is_pseudo("v1.0.0-rc.1"));
        assert_eq!(
            escape("github.com/BurntSushi/toml"),
            "github.com/!burnt!sushi/toml"
        );
        assert!(is_vendored("vendor/a/b.go"));
        assert!(!is_vendored("vendor/modules.txt"));
    }

    #[test]
    fn hash1_is_the_go_commands() {
        // go-spew v1.1.1 has no go.mod: the go command's synthesized one and its go.sum line
        // (gin-gonic/gin's go.sum: `github.com/davecgh/go-spew v1.1.1/go.mod h1:J7Y8…`).
        let files = vec![(
            "go.mod".to_string(),
            b"module github.com/davecgh/go-spew\n".to_vec(),
        )];
        assert_eq!(
            hash1(&files),
            "h1:J7Y8YcW2NihsgmVo/mv3lAwl/skON4iLHjSsI+c5H38="
        );
    }
}
