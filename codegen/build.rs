//! Build facts the kernel keys include (see `jit::KernelKey`): a hash of this crate's
//! sources, so object code cached on disk by one build of the code generator is never
//! loaded by another, and the version of the LLVM linked.

use std::hash::Hasher;
use std::path::Path;

/// FNV-1a, 64 bits: stable across builds and Rust versions (unlike `DefaultHasher`).
struct Fnv(u64);

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

fn hash_dir(dir: &Path, h: &mut Fnv) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            hash_dir(&path, h);
        } else if path.extension().is_some_and(|e| e == "rs") {
            h.write(path.file_name().unwrap_or_default().as_encoded_bytes());
            h.write(&std::fs::read(&path).unwrap_or_default());
        }
    }
}

fn main() {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    hash_dir(Path::new("src"), &mut h);
    h.write(include_bytes!("Cargo.toml"));
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!(
        "cargo:rustc-env=BROADHEAD_CODEGEN_SOURCE_HASH={:016x}",
        h.finish()
    );
    // llvm-sys (`links = "llvm-14"` or `"llvm-19"`, by the feature chosen) tells its
    // dependents where its llvm-config is.
    let major = if std::env::var_os("CARGO_FEATURE_LLVM14").is_some() {
        "14"
    } else {
        "19"
    };
    let version = std::env::var(format!("DEP_LLVM_{major}_CONFIG_PATH"))
        .ok()
        .and_then(|path| {
            std::process::Command::new(path)
                .arg("--version")
                .output()
                .ok()
        })
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_else(|| major.to_string());
    println!("cargo:rustc-env=BROADHEAD_LLVM_VERSION={version}");
}
