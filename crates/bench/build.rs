//! With the `opensubdiv-petite` feature, compiles the shims that time
//! OpenSubdiv's own loops — `cpp/osd_eval.cpp` (limit evaluation, the
//! adaptive bench) and `cpp/osd_fvar.cpp` (`PrimvarRefiner`'s face-varying
//! and vertex interpolation, the face-varying bench) — against the OpenSubdiv sources bundled in `opensubdiv-petite-sys`
//! (whose static `osdCPU` and C++ runtime the final binaries already link).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "opensubdiv-petite")]
    osd::compile();
}

#[cfg(feature = "opensubdiv-petite")]
mod osd {
    use std::path::{Path, PathBuf};

    /// Overrides the search: the folder holding `opensubdiv/far/...`.
    const INCLUDE_VAR: &str = "SUBLA_OSD_INCLUDE";
    const SYS_CRATE: &str = "opensubdiv-petite-sys";

    pub(super) fn compile() {
        println!("cargo:rerun-if-changed=cpp/osd_eval.cpp");
        println!("cargo:rerun-if-changed=cpp/osd_fvar.cpp");
        println!("cargo:rerun-if-changed=cpp/osd_common.h");
        println!("cargo:rerun-if-env-changed={INCLUDE_VAR}");
        println!("cargo:rerun-if-env-changed=CARGO_HOME");
        let include = match include_dir() {
            Ok(dir) => dir,
            Err(why) => panic!(
                "subla-bench (feature opensubdiv-petite): cannot find the OpenSubdiv headers of {SYS_CRATE}: {why}. \
                 Set {INCLUDE_VAR} to the folder that holds `opensubdiv/far/patchTable.h` \
                 (the `OpenSubdiv` folder of the {SYS_CRATE} sources, OpenSubdiv 3.7.0)."
            ),
        };
        // As OpenSubdiv's own optimised build (`-O2 -DNDEBUG`): its inline
        // headers' asserts sit in the timed loop (`PatchMap::FindPatch`).
        cc::Build::new()
            .cpp(true)
            .std("c++14")
            .opt_level(2)
            .define("NDEBUG", None)
            .include(&include)
            .file("cpp/osd_eval.cpp")
            .file("cpp/osd_fvar.cpp")
            .compile("subla_osd_eval");
    }

    fn has_headers(dir: &Path) -> bool {
        dir.join("opensubdiv/far/patchTable.h").is_file()
    }

    /// `$SUBLA_OSD_INCLUDE`, else the `OpenSubdiv` folder of the
    /// `opensubdiv-petite-sys` sources in cargo's registry, of the version
    /// in the workspace's `Cargo.lock` where there is one (OpenSubdiv's
    /// namespace carries its version, so headers of another version would
    /// fail to link rather than mislink).
    fn include_dir() -> Result<PathBuf, String> {
        if let Some(dir) = std::env::var_os(INCLUDE_VAR) {
            let dir = PathBuf::from(dir);
            return if has_headers(&dir) {
                Ok(dir)
            } else {
                Err(format!("{INCLUDE_VAR}={} has no opensubdiv/far/patchTable.h", dir.display()))
            };
        }
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
            .ok_or("neither CARGO_HOME nor HOME is set")?;
        let registry = cargo_home.join("registry/src");
        let version = locked_version();
        let mut found: Vec<PathBuf> = Vec::new();
        let sources = std::fs::read_dir(&registry).map_err(|e| format!("cannot read {}: {e}", registry.display()))?;
        for index in sources.flatten() {
            let Ok(crates) = std::fs::read_dir(index.path()) else { continue };
            for c in crates.flatten() {
                let name = c.file_name().to_string_lossy().into_owned();
                let Some(v) = name.strip_prefix(SYS_CRATE).and_then(|r| r.strip_prefix('-')) else { continue };
                if version.as_ref().is_some_and(|want| want != v) {
                    continue;
                }
                let dir = c.path().join("OpenSubdiv");
                if has_headers(&dir) {
                    found.push(dir);
                }
            }
        }
        // Without a lock file to go by, the last by name.
        found.sort();
        found.pop().ok_or_else(|| {
            format!(
                "no {SYS_CRATE}{}/OpenSubdiv with headers under {}",
                version.map_or_else(String::new, |v| format!("-{v}")),
                registry.display()
            )
        })
    }

    /// The version of `opensubdiv-petite-sys` in the nearest `Cargo.lock`
    /// above this crate.
    fn locked_version() -> Option<String> {
        let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
        let lock = manifest.ancestors().map(|d| d.join("Cargo.lock")).find(|p| p.is_file())?;
        println!("cargo:rerun-if-changed={}", lock.display());
        let text = std::fs::read_to_string(lock).ok()?;
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim() == format!("name = \"{SYS_CRATE}\"") {
                let v = lines.next()?.trim().strip_prefix("version = \"")?.strip_suffix('"')?;
                return Some(v.to_string());
            }
        }
        None
    }
}
