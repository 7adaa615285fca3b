//! The table of subdivision schemes: one entry per scheme, each with its
//! implementations (specialised kernels, mapped algebra, GPU) as
//! type-erased refiners ([`DynRefiner`]), what input it takes, and how its
//! output grows. Tools dispatch through it (the `subla` command-line tool
//! does, for every subcommand and its memory prediction), so that adding a
//! scheme to them is one [`Registry::register`] call.
//!
//! ```
//! use subla::registry::{Backend, Path, Registry, Setup};
//! use subla::{Par, Refiner, eval};
//!
//! let registry = Registry::builtin();
//! let loop_scheme = registry.get("loop").expect("a built-in scheme");
//! let refiner = loop_scheme.refiner(Backend::Cpu, Path::Kernels, &Setup::default())?;
//! let mesh = subla::Mesh::from_faces(4, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
//! let plan = refiner.build(&mesh, 2, Par::Rayon)?;
//! let x = ndarray::array![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
//! assert_eq!(eval(&plan, x.view(), Par::Rayon)?.nrows(), 34);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The dispatch costs one virtual call per build, step and eval (the
//! kernels inside are the concrete ones): `benches/catmark.rs` times a
//! boxed refiner against the concrete one.

use std::fmt;

use subla_algebra::Par;
use subla_mesh::{FVarLinearInterpolation, Mesh};
use subla_scheme::{DynRefiner, FallbackPolicy, Plan};
use thiserror::Error;

#[cfg(feature = "gpu")]
use std::sync::{Arc, OnceLock};

/// Where a refiner runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The CPU (rayon).
    Cpu,
    /// The GPU through wgpu (feature `gpu`).
    Gpu,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
        })
    }
}

/// How a refiner is written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Path {
    /// Specialised kernels (Mlakar et al. 2020, §4; "SLAK").
    Kernels,
    /// Mapped sparse algebra (§3; "LAK").
    Algebra,
    /// The edge-friend encoding of quad meshes (Kuth et al. 2023):
    /// Catmull-Clark's [`subla_catmark::CatmarkEdgeFriend`].
    EdgeFriend,
    /// Closed-form halfedge refinement: each refined level's connectivity
    /// computed per element from its parent's (Catmull-Clark's
    /// [`subla_catmark::CatmarkHalfedge`], Loop's
    /// [`subla_loop::LoopHalfedge`], √3's [`subla_sqrt3::Sqrt3Halfedge`]).
    Halfedge,
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Path::Kernels => "specialised kernels",
            Path::Algebra => "mapped algebra",
            Path::EdgeFriend => "edge-friend kernels",
            Path::Halfedge => "closed-form halfedge kernels",
        })
    }
}

/// What faces a scheme refines.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Faces {
    /// Faces of any order.
    Any,
    /// Triangles only (`Mesh::triangulated` splits other faces).
    Triangles,
}

/// How a scheme's output grows, for predicting its size from counts alone.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Growth {
    /// Faces per parent face at every step after the first.
    pub factor: u32,
    /// Whether the first step makes one face per corner (Catmull-Clark on
    /// faces of any order) rather than `factor` per face.
    pub first_per_corner: bool,
}

impl Growth {
    /// Faces after `levels` steps of `mesh`, saturating.
    pub fn faces(&self, mesh: &Mesh, levels: u32) -> u128 {
        if levels == 0 {
            return mesh.num_faces() as u128;
        }
        let factor = u128::from(self.factor);
        let first = if self.first_per_corner {
            mesh.topology().num_corners() as u128
        } else {
            (mesh.num_faces() as u128).saturating_mul(factor)
        };
        first.saturating_mul(factor.saturating_pow(levels - 1))
    }
}

/// Errors of choosing a refiner.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// No scheme of that name.
    #[error("no scheme named {name:?} (the registry has {known})")]
    UnknownScheme {
        /// The name asked for.
        name: String,
        /// The names it has, comma separated.
        known: String,
    },
    /// The scheme has no implementation on that backend and path.
    #[error("{scheme} has no {path} on the {backend} (it has: {available})")]
    NoImplementation {
        /// The scheme.
        scheme: &'static str,
        /// The backend asked for.
        backend: Backend,
        /// The path asked for.
        path: Path,
        /// What it has, comma separated.
        available: String,
    },
    /// A scheme of this name is registered already.
    #[error("a scheme named {name:?} is registered already")]
    Duplicate {
        /// The name.
        name: &'static str,
    },
    /// The GPU could not be opened (no usable adapter, or the device
    /// request failed; the error names what was tried).
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Gpu(#[from] subla_gpu::GpuError),
    /// The GPU backend was asked for without the `gpu` feature.
    #[error("the GPU backend needs subla's `gpu` feature")]
    NoGpuFeature,
    /// The scheme has no face-varying rules ([`face_varying_plan`]).
    #[error("the {scheme} scheme has no face-varying rules (catmark, bilinear and loop have)")]
    NoFaceVarying {
        /// The scheme asked for.
        scheme: String,
    },
    /// The scheme refused the face-varying channel.
    #[error(transparent)]
    Scheme(#[from] subla_scheme::SchemeError),
}

/// A boxed, type-erased refiner over meshes.
pub type BoxedRefiner = Box<dyn DynRefiner<Mesh>>;

/// Makes a CPU refiner.
pub type MakeCpu = fn() -> BoxedRefiner;

/// Makes a GPU refiner on a context, with a fallback policy.
#[cfg(feature = "gpu")]
pub type MakeGpu = fn(Arc<subla_gpu::GpuContext>, FallbackPolicy) -> BoxedRefiner;

/// What the refiners a registry makes share: the fallback policy of GPU
/// plans, and the GPU context (opened on the first GPU refiner asked for,
/// then shared).
#[derive(Debug, Default)]
pub struct Setup {
    /// What GPU plans do when the device cannot evaluate.
    pub fallback: FallbackPolicy,
    #[cfg(feature = "gpu")]
    gpu: OnceLock<Arc<subla_gpu::GpuContext>>,
}

impl Setup {
    /// A setup whose GPU plans follow `fallback`.
    pub fn with_fallback(fallback: FallbackPolicy) -> Self {
        Setup {
            fallback,
            #[cfg(feature = "gpu")]
            gpu: OnceLock::new(),
        }
    }

    /// The GPU context, opened on the first call (adapter chosen as
    /// `subla_gpu::GpuContext::new` chooses it).
    ///
    /// # Errors
    /// [`RegistryError::Gpu`] naming what was tried.
    #[cfg(feature = "gpu")]
    pub fn gpu(&self) -> Result<Arc<subla_gpu::GpuContext>, RegistryError> {
        if let Some(ctx) = self.gpu.get() {
            return Ok(Arc::clone(ctx));
        }
        let ctx = Arc::new(subla_gpu::GpuContext::new()?);
        Ok(Arc::clone(self.gpu.get_or_init(|| ctx)))
    }
}

#[derive(Clone)]
enum Make {
    Cpu(MakeCpu),
    #[cfg(feature = "gpu")]
    Gpu(MakeGpu),
}

/// One implementation of a scheme.
#[derive(Clone)]
struct Implementation {
    backend: Backend,
    path: Path,
    make: Make,
}

/// A scheme: its name, what it takes, how it grows and its
/// implementations.
#[derive(Clone)]
pub struct Scheme {
    name: &'static str,
    about: &'static str,
    faces: Faces,
    growth: Growth,
    implementations: Vec<Implementation>,
    fastest: Vec<(Backend, Path)>,
}

impl fmt::Debug for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scheme")
            .field("name", &self.name)
            .field("faces", &self.faces)
            .field("growth", &self.growth)
            .field("implementations", &self.implementations().collect::<Vec<_>>())
            .field("fastest", &self.fastest)
            .finish()
    }
}

impl Scheme {
    /// A scheme named `name` (what tools call it) with a one-line
    /// description and its specialised-kernel CPU refiner. It takes faces
    /// of any order and grows four faces per face by default.
    pub fn new(name: &'static str, about: &'static str, kernels: MakeCpu) -> Self {
        Scheme {
            name,
            about,
            faces: Faces::Any,
            growth: Growth { factor: 4, first_per_corner: false },
            implementations: vec![Implementation {
                backend: Backend::Cpu,
                path: Path::Kernels,
                make: Make::Cpu(kernels),
            }],
            fastest: Vec::new(),
        }
    }

    /// The same scheme with a mapped-algebra CPU refiner.
    pub fn with_algebra(mut self, algebra: MakeCpu) -> Self {
        self.implementations.push(Implementation {
            backend: Backend::Cpu,
            path: Path::Algebra,
            make: Make::Cpu(algebra),
        });
        self
    }

    /// The same scheme with a CPU refiner written as `path` (for example
    /// [`Path::EdgeFriend`]), replacing one it had.
    pub fn with_cpu_path(mut self, path: Path, make: MakeCpu) -> Self {
        self.implementations.retain(|i| !(i.backend == Backend::Cpu && i.path == path));
        self.implementations.push(Implementation { backend: Backend::Cpu, path, make: Make::Cpu(make) });
        self
    }

    /// The same scheme, with `path` the one [`Scheme::fastest`] names on
    /// `backend` (measured to be the fastest there).
    pub fn with_fastest(mut self, backend: Backend, path: Path) -> Self {
        self.fastest.retain(|&(b, _)| b != backend);
        self.fastest.push((backend, path));
        self
    }

    /// The path a run on `backend` takes when the caller does not choose:
    /// the scheme's fastest there where it has one, else
    /// [`Path::Kernels`].
    pub fn fastest(&self, backend: Backend) -> Path {
        match self.fastest.iter().find(|&&(b, _)| b == backend) {
            Some(&(_, p)) if self.has(backend, p) => p,
            _ => Path::Kernels,
        }
    }

    /// The same scheme with a GPU refiner (specialised kernels).
    #[cfg(feature = "gpu")]
    pub fn with_gpu(self, gpu: MakeGpu) -> Self {
        self.with_gpu_path(Path::Kernels, gpu)
    }

    /// The same scheme with a GPU refiner written as `path`, replacing one
    /// it had.
    #[cfg(feature = "gpu")]
    pub fn with_gpu_path(mut self, path: Path, gpu: MakeGpu) -> Self {
        self.implementations.retain(|i| !(i.backend == Backend::Gpu && i.path == path));
        self.implementations.push(Implementation { backend: Backend::Gpu, path, make: Make::Gpu(gpu) });
        self
    }

    /// The same scheme, taking `faces`.
    pub fn with_faces(mut self, faces: Faces) -> Self {
        self.faces = faces;
        self
    }

    /// The same scheme, growing as `growth` says.
    pub fn with_growth(mut self, growth: Growth) -> Self {
        self.growth = growth;
        self
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its one-line description.
    pub fn about(&self) -> &'static str {
        self.about
    }

    /// What faces it refines.
    pub fn faces(&self) -> Faces {
        self.faces
    }

    /// How its output grows.
    pub fn growth(&self) -> Growth {
        self.growth
    }

    /// Its implementations, as (backend, path).
    pub fn implementations(&self) -> impl Iterator<Item = (Backend, Path)> + '_ {
        self.implementations.iter().map(|i| (i.backend, i.path))
    }

    /// Whether it has an implementation on `backend` and `path`.
    pub fn has(&self, backend: Backend, path: Path) -> bool {
        self.implementations().any(|i| i == (backend, path))
    }

    /// The refiner of `backend` and `path`.
    ///
    /// # Errors
    /// [`RegistryError::NoImplementation`]; for the GPU,
    /// [`RegistryError::Gpu`] when no device can be opened, or
    /// [`RegistryError::NoGpuFeature`].
    pub fn refiner(&self, backend: Backend, path: Path, setup: &Setup) -> Result<BoxedRefiner, RegistryError> {
        let Some(imp) = self.implementations.iter().find(|i| i.backend == backend && i.path == path) else {
            return Err(RegistryError::NoImplementation {
                scheme: self.name,
                backend,
                path,
                available: self
                    .implementations()
                    .map(|(b, p)| format!("{p} on the {b}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        #[cfg(not(feature = "gpu"))]
        let _ = setup;
        match imp.make {
            Make::Cpu(make) => Ok(make()),
            #[cfg(feature = "gpu")]
            Make::Gpu(make) => Ok(make(setup.gpu()?, setup.fallback)),
        }
    }
}

/// The plan of a face-varying channel: the values `0..num_values` that
/// the corners of `mesh` use (`indices`, one per corner, face after face),
/// refined `levels` times by the face-varying rules of `scheme` (`catmark`,
/// `bilinear` or `loop`, OpenSubdiv's rules) with the boundary mode `mode`.
/// Its rows are the refined values (`Plan::operator` the per-level
/// matrices); the corners' indices at every level are those of
/// [`subla_scheme::fvar::FVarPlan::indices`] or of the value mesh.
///
/// The value-mesh refinement (the values' own mesh refined by the vertex
/// kernels) is taken where it gives the same values, else the
/// face-varying rules.
///
/// # Errors
/// [`RegistryError::NoFaceVarying`] for another scheme; the scheme's errors
/// on the channel ([`RegistryError::Scheme`]).
pub fn face_varying_plan(
    mesh: &Mesh,
    indices: &[u32],
    num_values: usize,
    scheme: &str,
    levels: u32,
    mode: FVarLinearInterpolation,
    par: Par,
) -> Result<Box<dyn Plan>, RegistryError> {
    use subla_catmark::fvar::QuadScheme;
    let quad = match scheme {
        "catmark" => QuadScheme::Catmark,
        "bilinear" => QuadScheme::Bilinear,
        "loop" => {
            if let Some(fast) = subla_loop::fvar::value_mesh_refinement(mesh, indices, num_values, levels, mode, par)? {
                return Ok(Box::new(fast));
            }
            return Ok(Box::new(subla_loop::fvar::build(mesh, indices, num_values, levels, mode, par)?));
        }
        other => return Err(RegistryError::NoFaceVarying { scheme: other.to_owned() }),
    };
    if let Some(fast) = subla_catmark::fvar::value_mesh_refinement(mesh, indices, num_values, levels, mode, quad, par)?
    {
        return Ok(Box::new(fast));
    }
    Ok(Box::new(subla_catmark::fvar::build(mesh, indices, num_values, levels, mode, quad, par)?))
}

/// The table of schemes.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    schemes: Vec<Scheme>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// The schemes subla ships: `catmark`, `bilinear`, `loop`,
    /// `loop-cgal` and `sqrt3`, with their algebra and (feature `gpu`) GPU
    /// implementations.
    pub fn builtin() -> Self {
        let quads = Growth { factor: 4, first_per_corner: true };
        let catmark =
            Scheme::new("catmark", "Catmull-Clark (OpenSubdiv's catmark)", || Box::new(subla_catmark::CatmarkSlak))
                .with_algebra(|| Box::new(subla_catmark::CatmarkLak))
                .with_cpu_path(Path::EdgeFriend, || Box::new(subla_catmark::CatmarkEdgeFriend::new()))
                .with_cpu_path(Path::Halfedge, || Box::new(subla_catmark::CatmarkHalfedge::new()))
                .with_fastest(Backend::Cpu, Path::EdgeFriend)
                .with_growth(quads);
        let bilinear = Scheme::new("bilinear", "Bilinear (face centroids and edge midpoints)", || {
            Box::new(subla_catmark::Bilinear)
        })
        .with_growth(quads);
        let loop_osd =
            Scheme::new("loop", "Loop (OpenSubdiv's rules; triangles only)", || Box::new(subla_loop::LoopSlak::new()))
                .with_algebra(|| Box::new(subla_loop::LoopLak::new()))
                .with_cpu_path(Path::Halfedge, || Box::new(subla_loop::LoopHalfedge::new()))
                .with_fastest(Backend::Cpu, Path::Halfedge)
                .with_faces(Faces::Triangles);
        let loop_cgal = Scheme::new(
            "loop-cgal",
            "Loop with CGAL's rules (boundary edge points are midpoints, boundary vertices (1,6,1)/8, tags ignored)",
            || Box::new(subla_loop::LoopSlak::cgal()),
        )
        .with_algebra(|| Box::new(subla_loop::LoopLak::cgal()))
        .with_cpu_path(Path::Halfedge, || Box::new(subla_loop::LoopHalfedge::cgal()))
        .with_fastest(Backend::Cpu, Path::Halfedge)
        .with_faces(Faces::Triangles);
        let sqrt3 = Scheme::new(
            "sqrt3",
            "Kobbelt's sqrt(3) (triangles only; levels count steps, two steps being a 1-to-9 refinement; boundary edges split every second step)",
            || Box::new(subla_sqrt3::Sqrt3Slak::new()),
        )
        .with_algebra(|| Box::new(subla_sqrt3::Sqrt3Lak::new()))
        .with_cpu_path(Path::Halfedge, || Box::new(subla_sqrt3::Sqrt3Halfedge::new()))
        .with_fastest(Backend::Cpu, Path::Halfedge)
        .with_faces(Faces::Triangles)
        .with_growth(Growth { factor: 3, first_per_corner: false });
        #[cfg(feature = "gpu")]
        let (catmark, loop_osd, loop_cgal, sqrt3) = (
            catmark
                .with_gpu(|ctx, f| Box::new(subla_catmark_gpu::CatmarkGpu::shared(ctx).with_fallback(f)))
                .with_gpu_path(Path::EdgeFriend, |ctx, f| {
                    Box::new(subla_catmark_gpu::CatmarkEdgeFriendGpu::shared(ctx).with_fallback(f))
                }),
            loop_osd.with_gpu(|ctx, f| Box::new(subla_tri_gpu::LoopGpu::shared(ctx).with_fallback(f))),
            loop_cgal.with_gpu(|ctx, f| Box::new(subla_tri_gpu::LoopGpu::shared(ctx).cgal().with_fallback(f))),
            sqrt3.with_gpu(|ctx, f| Box::new(subla_tri_gpu::Sqrt3Gpu::shared(ctx).with_fallback(f))),
        );
        Registry { schemes: vec![catmark, bilinear, loop_osd, loop_cgal, sqrt3] }
    }

    /// Adds `scheme`.
    ///
    /// # Errors
    /// [`RegistryError::Duplicate`] if its name is taken.
    pub fn register(&mut self, scheme: Scheme) -> Result<(), RegistryError> {
        if self.get(scheme.name).is_some() {
            return Err(RegistryError::Duplicate { name: scheme.name });
        }
        self.schemes.push(scheme);
        Ok(())
    }

    /// The scheme named `name`.
    pub fn get(&self, name: &str) -> Option<&Scheme> {
        self.schemes.iter().find(|s| s.name == name)
    }

    /// The scheme named `name`, or the error listing the names there are.
    ///
    /// # Errors
    /// [`RegistryError::UnknownScheme`].
    pub fn scheme(&self, name: &str) -> Result<&Scheme, RegistryError> {
        self.get(name).ok_or_else(|| RegistryError::UnknownScheme {
            name: name.to_owned(),
            known: self.schemes.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
        })
    }

    /// Every scheme, in the order registered.
    pub fn schemes(&self) -> &[Scheme] {
        &self.schemes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_names_are_unique_and_every_cpu_refiner_is_named() {
        let r = Registry::builtin();
        let names: Vec<_> = r.schemes().iter().map(Scheme::name).collect();
        assert_eq!(names, ["catmark", "bilinear", "loop", "loop-cgal", "sqrt3"]);
        for s in r.schemes() {
            let k = s.refiner(Backend::Cpu, Path::Kernels, &Setup::default()).unwrap();
            assert!(!k.name().is_empty());
        }
        let mut again = r.clone();
        assert!(matches!(
            again.register(Scheme::new("loop", "again", || Box::new(subla_catmark::Bilinear))),
            Err(RegistryError::Duplicate { name: "loop" })
        ));
    }

    #[test]
    fn catmark_and_loop_run_their_fastest_paths_by_default_on_the_cpu() {
        let r = Registry::builtin();
        let catmark = r.scheme("catmark").unwrap();
        assert_eq!(catmark.fastest(Backend::Cpu), Path::EdgeFriend);
        assert_eq!(catmark.fastest(Backend::Gpu), Path::Kernels);
        let k = catmark.refiner(Backend::Cpu, Path::EdgeFriend, &Setup::default()).unwrap();
        assert_eq!(k.name(), "catmark-edge-friend");
        for (name, refiner) in
            [("loop", "loop-halfedge"), ("loop-cgal", "loop-halfedge-cgal"), ("sqrt3", "sqrt3-halfedge")]
        {
            let s = r.scheme(name).unwrap();
            assert_eq!(s.fastest(Backend::Cpu), Path::Halfedge);
            let k = s.refiner(Backend::Cpu, Path::Halfedge, &Setup::default()).unwrap();
            assert_eq!(k.name(), refiner);
        }
    }

    #[test]
    fn missing_implementations_are_typed_errors() {
        let r = Registry::builtin();
        let bilinear = r.scheme("bilinear").unwrap();
        assert!(matches!(
            bilinear.refiner(Backend::Cpu, Path::Algebra, &Setup::default()),
            Err(RegistryError::NoImplementation { scheme: "bilinear", backend: Backend::Cpu, path: Path::Algebra, .. })
        ));
        assert!(matches!(r.scheme("butterfly"), Err(RegistryError::UnknownScheme { .. })));
    }

    #[test]
    fn growth_predicts_the_face_counts() {
        let mesh = Mesh::from_faces(5, &[vec![0u32, 1, 2, 3], vec![1, 4, 2]]).unwrap();
        let quads = Growth { factor: 4, first_per_corner: true };
        assert_eq!(quads.faces(&mesh, 0), 2);
        assert_eq!(quads.faces(&mesh, 1), 7);
        assert_eq!(quads.faces(&mesh, 3), 7 * 16);
        let thirds = Growth { factor: 3, first_per_corner: false };
        assert_eq!(thirds.faces(&mesh, 2), 18);
        assert_eq!(thirds.faces(&mesh, 200), u128::MAX);
    }
}
