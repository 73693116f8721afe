//! The committed settings reference must be what the table generates.

#[test]
fn docs_configuration_md_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    let generated = proven_config::reference_markdown();
    if std::env::var_os("PROVEN_BLESS").is_some() {
        std::fs::write(path, &generated).expect("write docs/configuration.md");
        return;
    }
    assert!(
        committed == generated,
        "docs/configuration.md is stale: run `cargo xtask docs` \
         (or `PROVEN_BLESS=1 cargo test -p proven-config --test reference`)"
    );
}
