//! Any text as frontmatter YAML: whenever the line-by-line fast path answers,
//! its answer must be the full YAML parser's.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    skillkit_parser::check_fast_path(text);
});
