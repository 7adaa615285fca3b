//! The tool's schemes: every subcommand finds its refiner and predicts its
//! output size through subla's registry, so a scheme added there is a
//! scheme of every subcommand.

use std::sync::OnceLock;

use clap::builder::{PossibleValue, PossibleValuesParser};
use subla::registry::{Backend, BoxedRefiner, Path, Registry, RegistryError, Scheme, Setup};
use subla::scheme::{FallbackPolicy, SchemeError};
use subla_mesh::Mesh;

use crate::memory;

/// The registry, made once.
pub(crate) fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::builtin)
}

/// The `--scheme` values: the registry's names, each with its description
/// and where it runs (`--path`, `--backend`).
pub(crate) fn scheme_parser() -> PossibleValuesParser {
    PossibleValuesParser::new(registry().schemes().iter().map(|s| {
        let on = |path| {
            [Backend::Cpu, Backend::Gpu]
                .into_iter()
                .filter(|&b| s.has(b, path))
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
        };
        let mut runs = format!("slak on {}", on(Path::Kernels).join(" and "));
        if s.has(Backend::Cpu, Path::Algebra) {
            runs.push_str(", lak on cpu");
        }
        let ef = on(Path::EdgeFriend);
        if !ef.is_empty() {
            runs.push_str(&format!(", edge-friend on {} (the default on cpu)", ef.join(" and ")));
        }
        let he = on(Path::Halfedge);
        if !he.is_empty() {
            let default = if s.fastest(Backend::Cpu) == Path::Halfedge { " (the default on cpu)" } else { "" };
            runs.push_str(&format!(", halfedge on {}{default}", he.join(" and ")));
        }
        PossibleValue::new(s.name()).help(format!("{} [{runs}]", s.about()))
    }))
}

/// The scheme `name` (checked by [`scheme_parser`]).
pub(crate) fn scheme(name: &str) -> Result<&'static Scheme, String> {
    registry().scheme(name).map_err(|e| e.to_string())
}

/// Where a refiner runs and whether it may fall back to the CPU.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Choice {
    pub(crate) backend: Backend,
    pub(crate) path: Path,
    pub(crate) fallback: FallbackPolicy,
}

/// The refiner of `scheme` for `choice`. Without a usable GPU, the GPU
/// backend is an error naming what was tried — or, with a CPU fallback
/// allowed, a warning on standard error and the CPU refiner.
pub(crate) fn refiner(scheme: &Scheme, choice: Choice, setup: &Setup) -> Result<(BoxedRefiner, Backend), String> {
    if choice.backend == Backend::Gpu {
        crate::picture::quiet_driver_env();
    }
    match scheme.refiner(choice.backend, choice.path, setup) {
        Ok(r) => Ok((r, choice.backend)),
        Err(RegistryError::Gpu(e)) if choice.fallback == FallbackPolicy::Cpu => {
            eprintln!("warning: --backend gpu: {e}; running on the CPU (--fallback cpu)");
            let r = scheme.refiner(Backend::Cpu, choice.path, setup).map_err(|e| e.to_string())?;
            Ok((r, Backend::Cpu))
        }
        Err(RegistryError::Gpu(e)) => {
            Err(format!("--backend gpu: {e} (pass --fallback cpu to run on the CPU instead)"))
        }
        Err(e @ RegistryError::NoImplementation { .. }) => Err(format!("--backend {}: {e}", choice.backend)),
        Err(e) => Err(e.to_string()),
    }
}

/// A scheme's error as the tool prints it, with a hint where one helps.
pub(crate) fn error(e: SchemeError) -> String {
    match e {
        SchemeError::NotTriangles { .. } => format!("{e} (or pass --triangulate)"),
        SchemeError::Precision { .. } => format!("{e} (--precision f32, or --fallback cpu)"),
        e => e.to_string(),
    }
}

/// Refuses `levels` levels of `scheme` on `mesh` when the output is
/// predicted to exceed the budget (`max_memory`, or the default), from
/// counts alone.
pub(crate) fn check_memory(
    scheme: &Scheme,
    levels: u32,
    max_memory: Option<u64>,
    mesh: &Mesh,
    channels: usize,
) -> Result<(), String> {
    let faces = scheme.growth().faces(mesh, levels);
    let needed = memory::predicted_bytes(faces, channels);
    let (budget, what) = memory::budget(max_memory);
    if needed > u128::from(budget) {
        return Err(format!(
            "{levels} levels would make about {} faces and need about {}; the budget is {} ({what}; {})",
            memory::count(faces),
            memory::human(needed),
            memory::human(u128::from(budget)),
            memory::advice(&what),
        ));
    }
    Ok(())
}
