//! `SKILLKIT_SKIP_POSTGRES=1` marks the PostgreSQL tests ignored (cargo
//! counts them as such), for a machine that cannot run PostgreSQL; without
//! it they run, and fail when there is no PostgreSQL, saying how to get one.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(skip_postgres)");
    println!("cargo::rerun-if-env-changed=SKILLKIT_SKIP_POSTGRES");
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var_os("SKILLKIT_SKIP_POSTGRES").is_some_and(|v| v == "1") {
        println!("cargo::rustc-cfg=skip_postgres");
    }
}
