use std::path::Path;
use std::time::Instant;
fn walk(dir: &Path, n: &mut usize) { for e in std::fs::read_dir(dir).unwrap() { let e = e.unwrap(); if e.file_type().unwrap().is_dir() { walk(&e.path(), n) } else { *n += 1 } } }
fn main() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus");
    let mode = std::env::args().nth(1).unwrap_or_default();
    let n = 300;
    let t = Instant::now();
    for _ in 0..n {
        if mode == "floor" { let mut c = 0; walk(&corpus, &mut c); std::hint::black_box(c); }
        else { for k in ["github__awesome-copilot", "obra__superpowers"] { std::hint::black_box(skillkit::parser::KitLayout::scan(&corpus.join(k)).unwrap()); } }
    }
    println!("{mode} {:?}", t.elapsed() / n);
}
