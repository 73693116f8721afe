//! A Justfile's recipes (`just`, the command runner), read as a Makefile's targets are:
//! cattrs' CI runs `just cov`, and its `test` recipe is `uv run --all-extras --group test
//! pytest {{args}}` with `args` defaulting to the tests' folder. Read, never run.
//!
//! What is read: a recipe's header (`test *args="-x tests":`, its parameters' defaults) and
//! its body's lines; `{{name}}` is a parameter's default or a variable's value (`name :=
//! "…"`); any other `{{ … }}` (a conditional, a function) is left out, as a run with
//! nothing set would mostly make it empty. Written here: no crate reads Justfiles but
//! `just` itself, a binary.

/// The names a Justfile may have, as `just` looks for them.
pub const FILES: &[&str] = &["Justfile", "justfile", ".justfile"];

/// The command lines of recipe `name`, its parameters and variables filled in; none where
/// the file has no such recipe.
pub fn recipe(text: &str, name: &str) -> Option<Vec<String>> {
    let variables = variables(text);
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with([' ', '\t', '#', '@']) || line.is_empty() {
            continue;
        }
        let Some((head, _)) = split_header(line) else {
            continue;
        };
        let mut words = head.split_whitespace();
        if words.next() != Some(name) {
            continue;
        }
        let mut values = variables.clone();
        for parameter in parameters(&head[name.len()..]) {
            values.retain(|(n, _)| *n != parameter.0);
            values.push(parameter);
        }
        let mut body = Vec::new();
        while let Some(next) = lines.next_if(|l| l.is_empty() || l.starts_with([' ', '\t'])) {
            let command = next.trim().trim_start_matches(['@', '-']).trim();
            if command.is_empty() || command.starts_with('#') {
                continue;
            }
            let filled = filled(command, &values);
            if !filled.trim().is_empty() {
                body.push(filled.trim().to_string());
            }
        }
        return Some(body);
    }
    None
}

/// A recipe header's name and parameters, and what follows its `:` (the recipes it depends
/// on); none for a line that is no header (a `:=` assignment, a setting).
fn split_header(line: &str) -> Option<(&str, &str)> {
    if line.contains(":=") || line.starts_with("set ") || line.starts_with("import ") {
        return None;
    }
    // The `:` outside the parameters' quoted defaults.
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, ':') => return Some((&line[..i], &line[i + 1..])),
            _ => {}
        }
    }
    None
}

/// The parameters of a recipe header and their defaults (`*args="-x tests"`, `version=""`,
/// `target`: empty).
fn parameters(rest: &str) -> Vec<(String, String)> {
    let words = crate::suite::words(rest);
    words
        .into_iter()
        .map(|w| {
            let w = w.trim_start_matches(['*', '+', '$']);
            match w.split_once('=') {
                Some((name, value)) => (name.to_string(), value.to_string()),
                None => (w.to_string(), String::new()),
            }
        })
        .collect()
}

/// The file's variables (`name := "value"`, `export name := 'value'`), their quoted values.
fn variables(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with([' ', '\t']))
        .filter_map(|l| {
            let l = l.strip_prefix("export ").unwrap_or(l);
            let (name, value) = l.split_once(":=")?;
            let value = value.trim();
            let unquoted = ['"', '\''].into_iter().find_map(|q| {
                value
                    .strip_prefix(q)
                    .and_then(|v| v.strip_suffix(q))
                    .map(str::to_string)
            })?;
            Some((name.trim().to_string(), unquoted))
        })
        .collect()
}

/// A recipe line with each `{{name}}` its value and every other `{{ … }}` left out.
fn filled(line: &str, values: &[(String, String)]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        let Some(close) = rest[at..].find("}}") else {
            out.push_str(&rest[at..]);
            return out;
        };
        let inner = rest[at + 2..at + close].trim();
        if let Some((_, value)) = values.iter().find(|(n, _)| n == inner) {
            out.push_str(value);
        }
        rest = &rest[at + close + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cattrs' Justfile: the `test` recipe's parameter default is the tests' folder, its
    /// interpreter choice a conditional; a variable and another recipe beside it.
    #[test]
    fn a_recipe_is_read_with_its_parameters_defaults() {
        let text = "python := \"\"\ncovcleanup := \"true\"\n\n# Sync the environment\nsync version=\"\":\n    uv sync --all-groups --all-extras\n\ntest *args=\"-x --ff -n auto tests\":\n    uv run {{ if python != '' { '-p ' + python } else { '' } }} --all-extras --group test pytest {{args}}\n\ncov *args=\"tests\":\n    @uv run coverage run -m pytest {{args}}\n    {{ if covcleanup == \"true\" { \"uv run coverage combine\" } else { \"\" } }}\n";
        assert_eq!(
            recipe(text, "test").expect("a test recipe"),
            ["uv run  --all-extras --group test pytest -x --ff -n auto tests"]
        );
        assert_eq!(
            recipe(text, "cov").expect("a cov recipe"),
            ["uv run coverage run -m pytest tests"],
            "a line of a conditional alone is left out"
        );
        assert_eq!(recipe(text, "lint"), None);
    }
}
