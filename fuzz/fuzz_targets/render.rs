//! Any body and arguments: rendering template tokens never panics, and text
//! without `$` comes back unchanged (plus appended arguments).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillkit::Skill;

fuzz_target!(|input: (&str, &str)| {
    let (body, arguments) = input;
    let skill = Skill::new("k:s", "d").with_body(body.to_owned());
    let rendered = skill.render(arguments, Some("session"));
    if !body.contains('$') {
        assert!(rendered.starts_with(body));
    }
});
