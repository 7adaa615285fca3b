//! Repository consistency of the WGSL kernels, read from the workspace at
//! run time:
//!
//! * `shaders/README.md`, the index of every kernel, names each `.wgsl`
//!   file under `crates/` once, with the crate that owns it and its entry
//!   points, and names no file that does not exist;
//! * no `include_str!` / `include_bytes!` of any crate reaches outside that
//!   crate's directory, so a packaged crate carries every file it compiles
//!   in (its shaders above all).
//!
//! Both skip, saying so, where the workspace is not around this crate (a
//! packaged copy of it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use subla_gpu::wgpu::naga;

/// The workspace root, if this crate sits in the workspace (a packaged
/// copy has no workspace manifest two folders up).
fn workspace() -> Option<PathBuf> {
    let root = normalize(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    (manifest.contains("[workspace]") && root.join("crates").is_dir()).then_some(root)
}

/// `path` with `.` and `..` resolved lexically (what `include_str!` does
/// with a relative path, without following links).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Every file under `dir` whose name ends in `suffix`, skipping build
/// output and hidden folders, sorted.
fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("{}: {e}", d.display())).path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if name.ends_with(suffix) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `path` relative to `root`, with `/` separators.
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A crate of the workspace: its package name, its directory and the
/// target files its manifest names by `path` (which may lie outside it).
struct Package {
    name: String,
    dir: PathBuf,
    targets: Vec<PathBuf>,
}

/// Every package whose manifest lies under `crates/`.
fn packages(root: &Path) -> Vec<Package> {
    let mut out = Vec::new();
    for manifest in files(&root.join("crates"), "Cargo.toml") {
        let text = read(&manifest);
        let dir = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
        let (mut section, mut name, mut targets) = (String::new(), None, Vec::new());
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line.to_owned();
                continue;
            }
            let Some((key, value)) = line.split_once('=') else { continue };
            let value = value.trim().trim_matches('"');
            match (section.as_str(), key.trim()) {
                ("[package]", "name") => name = Some(value.to_owned()),
                ("[lib]" | "[[bin]]" | "[[bench]]" | "[[example]]" | "[[test]]", "path") => {
                    targets.push(normalize(&dir.join(value)));
                }
                _ => {}
            }
        }
        if let Some(name) = name {
            out.push(Package { name, dir: normalize(&dir), targets });
        }
    }
    assert!(out.len() > 5, "found only {} packages under crates/", out.len());
    out
}

/// The package whose directory holds `path` (the innermost one).
fn owner<'a>(packages: &'a [Package], path: &Path) -> Option<&'a Package> {
    packages.iter().filter(|p| path.starts_with(&p.dir)).max_by_key(|p| p.dir.components().count())
}

/// One row of the index.
#[derive(Debug)]
struct Entry {
    line: usize,
    file: String,
    owner: String,
    entry_points: BTreeSet<String>,
    what: String,
}

/// The words between backticks in `cell`.
fn quoted(cell: &str) -> Vec<String> {
    cell.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The table rows of `shaders/README.md` that name a `.wgsl` file. The
/// first cell is a link, `` [`crates/…/x.wgsl`](../crates/…/x.wgsl) ``:
/// its text is the path from the root, its target the same path from
/// `shaders/`.
fn index(root: &Path) -> Vec<Entry> {
    let text = read(&root.join("shaders/README.md"));
    let mut out = Vec::new();
    for (i, row) in text.lines().enumerate() {
        let line = i + 1;
        let row = row.trim();
        if !row.starts_with('|') || !row.contains(".wgsl") {
            continue;
        }
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let [file, owner, entry_points, what] = cells[..] else {
            panic!(
                "shaders/README.md:{line}: a row of {} cells, expected 4 (file, crate, entry points, what)",
                cells.len()
            )
        };
        let (Some(text), Some(target)) = (
            file.strip_prefix('[').and_then(|f| f.split_once("](")).map(|(t, _)| t.trim_matches('`')),
            file.split_once("](").and_then(|(_, t)| t.strip_suffix(')')),
        ) else {
            panic!("shaders/README.md:{line}: the first cell is not a link [`path`](../path): {file}")
        };
        let resolved = relative(root, &normalize(&root.join("shaders").join(target)));
        assert_eq!(text, resolved, "shaders/README.md:{line}: the link's text and its target name different files");
        let owner = match &quoted(owner)[..] {
            [name] => name.clone(),
            _ => panic!("shaders/README.md:{line}: the crate cell must hold one `crate-name`: {owner}"),
        };
        out.push(Entry {
            line,
            file: resolved,
            owner,
            entry_points: quoted(entry_points).into_iter().collect(),
            what: what.to_owned(),
        });
    }
    out
}

/// The names of the entry points of a WGSL module, by naga's parser.
fn entry_points(path: &Path) -> BTreeSet<String> {
    let source = read(path);
    let module = naga::front::wgsl::parse_str(&source)
        .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&source)));
    module.entry_points.iter().map(|e| e.name.clone()).collect()
}

#[test]
fn the_shader_index_lists_every_kernel_with_its_crate_and_entry_points() {
    let Some(root) = workspace() else {
        eprintln!("skipped: this crate is not in its workspace (a packaged copy)");
        return;
    };
    let packages = packages(&root);
    let on_disk: Vec<PathBuf> = files(&root.join("crates"), ".wgsl");
    assert!(!on_disk.is_empty(), "no .wgsl file under crates/");
    let index = index(&root);
    let mut problems = Vec::new();

    let mut listed: BTreeMap<&str, &Entry> = BTreeMap::new();
    for e in &index {
        if let Some(first) = listed.insert(&e.file, e) {
            problems.push(format!("line {}: {} is listed again (first on line {})", e.line, e.file, first.line));
        }
        let path = root.join(&e.file);
        if !path.is_file() {
            problems.push(format!("line {}: {} does not exist", e.line, e.file));
            continue;
        }
        if !e.file.starts_with("crates/") {
            problems.push(format!("line {}: {} is not under crates/ (kernels live with their crate)", e.line, e.file));
        }
        match owner(&packages, &normalize(&path)) {
            Some(p) if p.name == e.owner => {}
            Some(p) => problems.push(format!("line {}: {} belongs to `{}`, not `{}`", e.line, e.file, p.name, e.owner)),
            None => problems.push(format!("line {}: {} is in no crate", e.line, e.file)),
        }
        let found = entry_points(&path);
        if found != e.entry_points {
            problems.push(format!(
                "line {}: {} has the entry points {:?}, the index says {:?}",
                e.line, e.file, found, e.entry_points
            ));
        }
        if e.what.is_empty() {
            problems.push(format!("line {}: {} has no description", e.line, e.file));
        }
    }
    for path in &on_disk {
        let file = relative(&root, path);
        if !listed.contains_key(file.as_str()) {
            problems.push(format!("{file} is not in the index"));
        }
    }
    assert!(problems.is_empty(), "shaders/README.md is out of date:\n  {}", problems.join("\n  "));
}

/// The literal path of every `include_str!` / `include_bytes!` in `source`
/// (outside line comments), with its line; `Err` with the line for an
/// argument that is not a plain string literal.
fn includes(source: &str) -> Vec<(usize, Result<String, String>)> {
    let mut out = Vec::new();
    for name in ["include_str", "include_bytes"] {
        let call = format!("{name}!(");
        let mut from = 0;
        while let Some(at) = source[from..].find(&call).map(|k| from + k) {
            from = at + call.len();
            let line_start = source[..at].rfind('\n').map_or(0, |k| k + 1);
            let line = source[..at].matches('\n').count() + 1;
            if source[line_start..at].contains("//") {
                continue;
            }
            let rest = source[from..].trim_start();
            let literal = rest
                .strip_prefix('"')
                .and_then(|r| r.find('"').map(|end| &r[..end]))
                .filter(|lit| !lit.contains('\\'))
                .map(str::to_owned)
                .ok_or_else(|| rest.lines().next().unwrap_or_default().to_owned());
            out.push((line, literal));
        }
    }
    out
}

#[test]
fn includes_stay_inside_their_crate() {
    let Some(root) = workspace() else {
        eprintln!("skipped: this crate is not in its workspace (a packaged copy)");
        return;
    };
    let packages = packages(&root);
    let mut sources: Vec<(PathBuf, &Package)> = Vec::new();
    for path in files(&root.join("crates"), ".rs") {
        let path = normalize(&path);
        if let Some(p) = owner(&packages, &path) {
            sources.push((path, p));
        }
    }
    // Targets a manifest names outside its directory (the top-level
    // benches and examples).
    for p in &packages {
        sources.extend(p.targets.iter().filter(|t| !t.starts_with(&p.dir) && t.is_file()).map(|t| (t.clone(), p)));
    }
    let (mut found, mut problems) = (0, Vec::new());
    for (path, package) in &sources {
        let here = relative(&root, path);
        for (line, literal) in includes(&read(path)) {
            found += 1;
            match literal {
                Ok(lit) => {
                    let target = normalize(&path.parent().unwrap_or(&root).join(&lit));
                    if !target.starts_with(&package.dir) {
                        problems.push(format!(
                            "{here}:{line}: \"{lit}\" is {}, outside `{}` ({})",
                            relative(&root, &target),
                            package.name,
                            relative(&root, &package.dir)
                        ));
                    }
                }
                Err(arg) => problems.push(format!("{here}:{line}: not a plain string literal, cannot check: {arg}")),
            }
        }
    }
    assert!(found > 10, "found only {found} includes in {} source files", sources.len());
    assert!(
        problems.is_empty(),
        "files compiled in from outside their crate (a packaged crate would not carry them):\n  {}",
        problems.join("\n  ")
    );
}
