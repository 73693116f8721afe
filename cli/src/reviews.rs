//! `proven reviews`: the reviews kept in this store that `proven review` ran (no tenant's),
//! newest first, so an id can be found again for `proven show` and `proven trace`.

use std::io::Write;

use proven_store::{ReviewSummary, Store};

use crate::exit::Exit;

#[derive(clap::Args)]
pub struct ReviewsArgs {
    /// How many reviews to list, newest first.
    #[arg(long, default_value_t = 20)]
    limit: u32,
    /// One JSON object a line (id, status, created_at, finished_at, repository, base, head).
    #[arg(long)]
    json: bool,
}

pub async fn run(store: &Store, args: ReviewsArgs) -> Result<u8, Exit> {
    let reviews = store
        .local_reviews(i64::from(args.limit.max(1)))
        .await
        .map_err(|e| Exit::store(e.to_string()))?;
    let text = if args.json {
        reviews
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.id, "status": r.status, "created_at": r.created_at,
                    "finished_at": r.finished_at, "repository": r.repository,
                    "base": r.base_rev, "head": r.head_rev,
                })
                .to_string()
                    + "\n"
            })
            .collect()
    } else {
        table(&reviews)
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Exit::input(format!("write output: {e}")))?;
    if reviews.is_empty() && !args.json {
        eprintln!("proven: no review in this store yet (`proven review` keeps each one here)");
    }
    Ok(0)
}

/// A revision as typed, or a commit id cut to 12 digits.
fn short(rev: &str) -> &str {
    if rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()) {
        &rev[..12]
    } else {
        rev
    }
}

fn table(reviews: &[ReviewSummary]) -> String {
    let rows: Vec<[String; 5]> = reviews
        .iter()
        .map(|r| {
            [
                r.id.clone(),
                r.status.clone(),
                r.created_at.clone(),
                format!("{}..{}", short(&r.base_rev), short(&r.head_rev)),
                r.repository.clone(),
            ]
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let header = ["ID", "STATUS", "CREATED", "BASE..HEAD", "REPOSITORY"].map(str::to_string);
    let mut widths = [0usize; 5];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_commit_id_is_cut_and_a_name_is_kept() {
        assert_eq!(
            super::short("0123456789abcdef0123456789abcdef01234567"),
            "0123456789ab"
        );
        assert_eq!(super::short("main"), "main");
    }
}
