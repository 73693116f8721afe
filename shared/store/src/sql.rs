//! Small helpers for statements built at run time.
//!
//! sqlx's `QueryBuilder` writes `?` placeholders for the `Any` driver, which Postgres
//! refuses; both SQLite and Postgres accept `$n`, so we number placeholders ourselves.

use std::fmt::Write;

/// `($1, $2, $3), ($4, $5, $6)` for `rows` rows of `cols` columns.
pub fn values_rows(rows: usize, cols: usize) -> String {
    values_rows_from(1, rows, cols)
}

/// Like [`values_rows`], numbering from `$first`.
pub fn values_rows_from(first: usize, rows: usize, cols: usize) -> String {
    let mut s = String::with_capacity(rows * cols * 5);
    for r in 0..rows {
        if r > 0 {
            s.push_str(", ");
        }
        s.push('(');
        for c in 0..cols {
            if c > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "${}", first + r * cols + c);
        }
        s.push(')');
    }
    s
}

/// `$from, $from+1, …` (`count` placeholders).
pub fn list(from: usize, count: usize) -> String {
    (from..from + count)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Seconds since the epoch (the columns that expire: sessions, publications' leases,
/// questions' leases).
pub fn epoch() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

pub fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Marks a statement assembled at run time as safe to send. Only for text built from this
/// crate's own constants and [`values_rows`]/[`list`] placeholders: every value is bound.
pub fn trusted(sql: String) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_placeholders_row_major() {
        assert_eq!(values_rows(2, 2), "($1, $2), ($3, $4)");
        assert_eq!(values_rows_from(3, 1, 2), "($3, $4)");
        assert_eq!(list(3, 2), "$3, $4");
    }
}
