//! Any bytes as a SKILL.md / AGENT.md: the parser and the strict validator
//! must return a value or a diagnostic, never panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillkit_parser::{AgentDocument, SkillDocument, validate};

fuzz_target!(|bytes: &[u8]| {
    let path = std::path::Path::new("kit/skills/fuzz/SKILL.md");
    if let Ok(doc) = SkillDocument::parse_file(path, bytes) {
        assert!(!doc.name.trim().is_empty());
        assert!(!doc.description.trim().is_empty());
    }
    let _ = AgentDocument::parse_file(std::path::Path::new("kit/AGENT.md"), "kit", bytes);
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = validate::skill_text(text, Some("fuzz"));
    }
});
