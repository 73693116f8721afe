/// One FIRST EPSS row: the probability of exploitation in the next 30 days, and its
/// percentile among all scored CVEs.
#[derive(Debug, Clone, PartialEq)]
pub struct EpssScore {
    pub cve: String,
    pub probability: f64,
    pub percentile: f64,
}

#[derive(Debug, Clone, Default)]
pub struct EpssScores {
    /// From the `#model_version:…,score_date:…` header line, when present.
    pub model_version: Option<String>,
    pub score_date: Option<String>,
    pub scores: Vec<EpssScore>,
}

#[derive(Debug, thiserror::Error)]
#[error("EPSS line {line}: {message}")]
pub struct EpssError {
    pub line: usize,
    pub message: String,
}

/// Reads FIRST's CSV (`cve,epss,percentile`, optionally preceded by a `#` header line).
/// A malformed row stops the read with its line number: a partly read score file would
/// silently under-report "likely to be exploited".
pub fn read_epss(text: &str) -> Result<EpssScores, EpssError> {
    let mut out = EpssScores::default();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(meta) = line.strip_prefix('#') {
            for part in meta.split(',') {
                if let Some(v) = part.strip_prefix("model_version:") {
                    out.model_version = Some(v.to_string());
                } else if let Some(v) = part.strip_prefix("score_date:") {
                    out.score_date = Some(v.to_string());
                }
            }
            continue;
        }
        let mut cols = line.split(',');
        let (Some(cve), Some(p), Some(pct)) = (cols.next(), cols.next(), cols.next()) else {
            return Err(EpssError {
                line: line_no,
                message: format!("expected cve,epss,percentile, got {line:?}"),
            });
        };
        if cve == "cve" {
            continue; // the column header
        }
        let parse = |s: &str, what: &str| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| (0.0..=1.0).contains(v))
                .ok_or_else(|| EpssError {
                    line: line_no,
                    message: format!("{what} {s:?} is not a number between 0 and 1"),
                })
        };
        out.scores.push(EpssScore {
            cve: cve.trim().to_string(),
            probability: parse(p, "epss")?,
            percentile: parse(pct, "percentile")?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_header_and_rows() {
        let s = read_epss(
            "#model_version:v3,score_date:2026-01-01\ncve,epss,percentile\nCVE-1-2,0.5,0.9\n",
        )
        .expect("valid");
        assert_eq!(s.model_version.as_deref(), Some("v3"));
        assert_eq!(
            s.scores,
            vec![EpssScore {
                cve: "CVE-1-2".into(),
                probability: 0.5,
                percentile: 0.9
            }]
        );
    }

    #[test]
    fn a_bad_row_names_its_line() {
        let e = read_epss("cve,epss,percentile\nCVE-1,abc,0.1\n").expect_err("bad");
        assert_eq!(e.line, 2);
    }
}
