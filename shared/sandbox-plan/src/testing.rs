//! What the crate's tests share.

/// A tree in a temporary directory: each file at its path, folders made as needed.
pub(crate) fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    dir
}

/// A reader of `files` as `documented_suite` takes one: a path's text, and `DIR/` the
/// names directly in that folder, one a line.
pub(crate) fn reader(files: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    move |p: &str| {
        if let Some(dir) = p.strip_suffix('/') {
            let names: Vec<&str> = files
                .iter()
                .filter_map(|(n, _)| n.strip_prefix(&format!("{dir}/")))
                .collect();
            return (!names.is_empty()).then(|| names.join("\n"));
        }
        files.iter().find(|(n, _)| n == p).map(|(_, t)| t.clone())
    }
}
