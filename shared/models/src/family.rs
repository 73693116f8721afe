/// The model family of a model id, for the rule that a Skeptic is never of the
/// generator's family: the name after the vendor's `/`, up to its first digit, `-`, `_`,
/// `.` or `:` (`nvidia/nemotron-3.5-super` → `nemotron`, `meta/llama-3.3-70b` → `llama`,
/// `gpt-4o` → `gpt`, `qwen2.5-coder:7b` → `qwen`). Configuration may name a family
/// explicitly where this guess is wrong.
pub fn family_of(model: &str) -> String {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .trim()
        .to_ascii_lowercase();
    let end = name
        .find(|c: char| c.is_ascii_digit() || matches!(c, '-' | '_' | '.' | ':'))
        .unwrap_or(name.len());
    let family = &name[..end];
    if family.is_empty() {
        name
    } else {
        family.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::family_of;

    #[test]
    fn families_come_from_the_model_name() {
        assert_eq!(
            family_of("nvidia/nemotron-3.5-super-vl-120b-a12b"),
            "nemotron"
        );
        assert_eq!(family_of("nvidia/llama-3.3-nemotron-super-49b"), "llama");
        assert_eq!(family_of("meta/llama-3.1-70b-instruct"), "llama");
        assert_eq!(family_of("gpt-4o-mini"), "gpt");
        assert_eq!(family_of("qwen2.5-coder:7b"), "qwen");
        assert_eq!(family_of("Mixtral-8x7B"), "mixtral");
    }
}
