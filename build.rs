// Embeds the git commit qsweep is built from as `QSWEEP_GIT_REVISION`, for
// the provenance file (`crates/qsweep-core/src/provenance.rs`), in the CLI
// only (and the Python module, `python/build.rs`): a commit recompiles these
// thin shells, not the library crates. Without git or a repository
// (a crates.io tarball) nothing is set and the revision reads `unknown`.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=QSWEEP_GIT_REVISION");
    if let Ok(rev) = std::env::var("QSWEEP_GIT_REVISION") {
        println!("cargo:rustc-env=QSWEEP_GIT_REVISION={rev}");
        return;
    }
    let Some(rev) = git(&["rev-parse", "HEAD"]) else {
        return;
    };
    println!("cargo:rustc-env=QSWEEP_GIT_REVISION={rev}");
    // Rebuild when HEAD moves: HEAD itself, the branch it names, packed refs.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let dir = PathBuf::from(dir);
        let mut watch = vec![dir.join("HEAD"), dir.join("packed-refs")];
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch.push(dir.join(branch));
        }
        // A missing path would rerun this script on every build.
        for p in watch.iter().filter(|p| p.exists()) {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}
