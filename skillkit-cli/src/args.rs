//! Parsers of the values flags take that are more than their type: a count
//! that must be 1 or more is refused at 0 with a message saying what to
//! give, not taken as 1 without a word.

/// A count of 1 or more (`search --limit`, `eval --runs`, `eval --jobs`).
/// clap prints the message after the flag and the value given:
/// `error: invalid value '0' for '--limit <LIMIT>': give a whole number, 1
/// or more`.
pub(crate) fn count(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(0) | Err(_) => Err("give a whole number, 1 or more".to_owned()),
        Ok(n) => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_a_whole_number_from_one_up() {
        assert_eq!(count("1"), Ok(1));
        assert_eq!(count("25"), Ok(25));
        for bad in ["0", "-1", "1.5", "", "ten", "99999999999999999999999"] {
            assert!(count(bad).is_err(), "{bad:?}");
        }
    }
}
