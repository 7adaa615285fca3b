//! The library's errors as Python exceptions.
//!
//! One hierarchy: `SublaError` and, under it, one class per error type of
//! the library (`MeshError`, `SchemeError`, `AlgebraError`,
//! `RegistryError`, `AdaptiveError`, `AnalysisError`). Every instance has
//! `kind`, the name of the Rust variant (`"NonManifoldEdge"`,
//! `"OverBudget"`, …), and the offending element where the variant names
//! one: `face`, `vertex`, `edge` (a vertex pair), `faces`, `line` (of the
//! file read), `index`, `level`, `scheme`. Code tells errors apart by class
//! and `kind`, never by the message.

use std::fmt::Debug;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyUserWarning, PyValueError};
use pyo3::prelude::*;
use subla::adaptive::AdaptiveError as Adaptive;
use subla::analysis::AnalysisError as Analysis;
use subla::registry::RegistryError as Registry;
use subla_algebra::AlgebraError as Algebra;
use subla_mesh::{Location, MeshError as Mesh, SharpnessTarget};
use subla_scheme::SchemeError as Scheme;

create_exception!(subla, SublaError, PyException, "Base class of subla's errors: `kind` names the variant.");
create_exception!(subla, MeshError, SublaError, "A mesh, its file or its tags are invalid.");
create_exception!(subla, SchemeError, SublaError, "A scheme refused its input or a request.");
create_exception!(subla, AlgebraError, SublaError, "A sparse matrix is malformed or too large.");
create_exception!(subla, RegistryError, SublaError, "No such scheme or implementation.");
create_exception!(subla, AdaptiveError, SublaError, "Adaptive refinement or limit evaluation failed.");
create_exception!(subla, AnalysisError, SublaError, "A local subdivision analysis could not be made.");
create_exception!(subla, DataLossWarning, PyUserWarning, "Data a call could not carry and left out.");

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SublaError", py.get_type::<SublaError>())?;
    m.add("MeshError", py.get_type::<MeshError>())?;
    m.add("SchemeError", py.get_type::<SchemeError>())?;
    m.add("AlgebraError", py.get_type::<AlgebraError>())?;
    m.add("RegistryError", py.get_type::<RegistryError>())?;
    m.add("AdaptiveError", py.get_type::<AdaptiveError>())?;
    m.add("AnalysisError", py.get_type::<AnalysisError>())?;
    m.add("DataLossWarning", py.get_type::<DataLossWarning>())?;
    Ok(())
}

/// An attribute of an exception.
enum Field {
    Int(i128),
    Text(String),
    Pair(u32, u32),
    Ints(Vec<u32>),
}

/// Which class, which variant, which elements.
struct Info {
    class: Class,
    kind: String,
    fields: Vec<(&'static str, Field)>,
}

#[derive(Copy, Clone)]
enum Class {
    Mesh,
    Scheme,
    Algebra,
    Registry,
    Adaptive,
    Analysis,
}

/// The variant's name: the derived `Debug` form starts with it.
fn variant(e: &impl Debug) -> String {
    let s = format!("{e:?}");
    s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
}

fn line(at: &Location) -> Vec<(&'static str, Field)> {
    at.line.map(|l| ("line", Field::Int(l as i128))).into_iter().collect()
}

fn mesh_fields(e: &Mesh) -> Vec<(&'static str, Field)> {
    let int = |v: usize| Field::Int(v as i128);
    match e {
        Mesh::Io { path, .. } => vec![("path", Field::Text(path.display().to_string()))],
        Mesh::MalformedNumber { at, .. }
        | Mesh::MalformedStatement { at, .. }
        | Mesh::NotText { at, .. }
        | Mesh::Truncated { at, .. }
        | Mesh::MoreThanDeclared { at, .. } => line(at),
        Mesh::IndexOutOfRange { at, face, index, .. } => {
            let mut f = vec![("face", int(*face)), ("index", Field::Int(i128::from(*index)))];
            f.extend(line(at));
            f
        }
        Mesh::FaceTooSmall { at, face, .. } => {
            let mut f = vec![("face", int(*face))];
            f.extend(line(at));
            f
        }
        Mesh::RepeatedVertex { at, face, vertex } => {
            let mut f = vec![("face", int(*face)), ("vertex", Field::Int(i128::from(*vertex)))];
            f.extend(line(at));
            f
        }
        Mesh::NonManifoldEdge { v0, v1, first, second, third, .. } => {
            vec![("edge", Field::Pair(*v0, *v1)), ("faces", Field::Ints(vec![*first, *second, *third]))]
        }
        Mesh::InconsistentOrientation { v0, v1, face_a, face_b } => {
            vec![("edge", Field::Pair(*v0, *v1)), ("faces", Field::Ints(vec![*face_a, *face_b]))]
        }
        Mesh::NonManifoldVertex { vertex, .. } => vec![("vertex", Field::Int(i128::from(*vertex)))],
        Mesh::NonFiniteCoordinate { at, vertex, channel, .. } => {
            let mut f = vec![("vertex", int(*vertex)), ("channel", int(*channel))];
            f.extend(line(at));
            f
        }
        Mesh::InvalidSharpness { at, target, .. } => {
            let mut f = match target {
                SharpnessTarget::Edge(a, b) => vec![("edge", Field::Pair(*a, *b))],
                SharpnessTarget::Vertex(v) => vec![("vertex", Field::Int(i128::from(*v)))],
            };
            f.extend(line(at));
            f
        }
        Mesh::CreaseNotAnEdge { at, v0, v1 } => {
            let mut f = vec![("edge", Field::Pair(*v0, *v1))];
            f.extend(line(at));
            f
        }
        Mesh::TagOutOfRange { at, element, index, .. } => {
            let mut f =
                vec![("element", Field::Text((*element).to_owned())), ("index", Field::Int(i128::from(*index)))];
            f.extend(line(at));
            f
        }
        Mesh::NotTriangle { face, .. } => vec![("face", int(*face))],
        _ => Vec::new(),
    }
}

fn mesh_info(e: &Mesh) -> Info {
    match e {
        Mesh::Algebra(a) => algebra_info(a),
        _ => Info { class: Class::Mesh, kind: variant(e), fields: mesh_fields(e) },
    }
}

fn algebra_info(e: &Algebra) -> Info {
    Info { class: Class::Algebra, kind: variant(e), fields: Vec::new() }
}

fn scheme_info(e: &Scheme) -> Info {
    let name = |s: &str| ("scheme", Field::Text(s.to_owned()));
    let int = |v: usize| Field::Int(v as i128);
    let fields = match e {
        Scheme::Mesh(m) => return mesh_info(m),
        Scheme::Algebra(a) => return algebra_info(a),
        Scheme::NotTriangles { scheme, source }
        | Scheme::NotManifold { scheme, source }
        | Scheme::AlgebraPathLimit { scheme, source } => {
            let mut f = vec![name(scheme), ("cause", Field::Text(variant(source.as_ref())))];
            f.extend(mesh_fields(source));
            f
        }
        Scheme::FaceTooLarge { scheme, face, .. } | Scheme::BoundaryFace { scheme, face, .. } => {
            vec![name(scheme), ("face", int(*face))]
        }
        Scheme::UnsupportedTag { scheme, element, .. } | Scheme::Unsupported { scheme, element, .. } => {
            vec![name(scheme), ("element", Field::Text(element.clone()))]
        }
        Scheme::LevelTooLarge { scheme, level, .. } => vec![name(scheme), ("level", Field::Int(i128::from(*level)))],
        Scheme::NoSuchLevel { level, .. } => vec![("level", Field::Int(i128::from(*level)))],
        Scheme::OverBudget { needed, budget, .. } => {
            vec![("needed", Field::Int(*needed as i128)), ("budget", Field::Int(*budget as i128))]
        }
        Scheme::NoLimit { scheme }
        | Scheme::NoMesh { scheme }
        | Scheme::Device { scheme, .. }
        | Scheme::Precision { scheme, .. }
        | Scheme::ForeignPlan { scheme, .. }
        | Scheme::Scheme { scheme, .. } => vec![name(scheme)],
        _ => Vec::new(),
    };
    Info { class: Class::Scheme, kind: variant(e), fields }
}

fn registry_info(e: &Registry) -> Info {
    match e {
        Registry::Scheme(s) => scheme_info(s),
        Registry::UnknownScheme { name, .. } | Registry::NoFaceVarying { scheme: name } => {
            Info { class: Class::Registry, kind: variant(e), fields: vec![("scheme", Field::Text(name.clone()))] }
        }
        Registry::NoImplementation { scheme, .. } => Info {
            class: Class::Registry,
            kind: variant(e),
            fields: vec![("scheme", Field::Text((*scheme).to_owned()))],
        },
        _ => Info { class: Class::Registry, kind: variant(e), fields: Vec::new() },
    }
}

fn adaptive_info(e: &Adaptive) -> Info {
    let fields = match e {
        Adaptive::Mesh(m) => return mesh_info(m),
        Adaptive::Scheme(s) => return scheme_info(s),
        Adaptive::Algebra(a) => return algebra_info(a),
        Adaptive::NoSuchFace { face, .. } => vec![("face", Field::Int(i128::from(*face)))],
        Adaptive::NoSuchPtexFace { ptex, .. } | Adaptive::NoPatch { ptex } => {
            vec![("ptex", Field::Int(i128::from(*ptex)))]
        }
        Adaptive::UnsupportedEndCap { level, face, .. } => {
            vec![("level", Field::Int(i128::from(*level))), ("face", Field::Int(i128::from(*face)))]
        }
        Adaptive::IsolationLevel { level } => vec![("level", Field::Int(i128::from(*level)))],
        Adaptive::OverBudget { level, bytes, budget } => vec![
            ("level", Field::Int(i128::from(*level))),
            ("needed", Field::Int(i128::from(*bytes))),
            ("budget", Field::Int(i128::from(*budget))),
        ],
        _ => Vec::new(),
    };
    Info { class: Class::Adaptive, kind: variant(e), fields }
}

fn analysis_info(e: &Analysis) -> Info {
    let fields = match e {
        Analysis::Mesh(m) => return mesh_info(m),
        Analysis::Scheme(s) => return scheme_info(s),
        Analysis::Algebra(a) => return algebra_info(a),
        Analysis::NotClosed { scheme, sector, i, j, .. } | Analysis::MissingPoint { scheme, sector, i, j } => vec![
            ("scheme", Field::Text((*scheme).to_owned())),
            ("sector", Field::Int(i128::from(*sector))),
            ("place", Field::Pair(*i, *j)),
        ],
        Analysis::UnknownChildPoint { scheme, row } => {
            vec![("scheme", Field::Text((*scheme).to_owned())), ("row", Field::Int(*row as i128))]
        }
        Analysis::NoSubdominantPair { scheme, valence } => {
            vec![("scheme", Field::Text((*scheme).to_owned())), ("valence", Field::Int(*valence as i128))]
        }
        _ => Vec::new(),
    };
    Info { class: Class::Analysis, kind: variant(e), fields }
}

/// A library error, or a bad argument, on its way to Python.
pub(crate) enum Failure {
    Mesh(Mesh),
    Scheme(Scheme),
    Algebra(Algebra),
    Registry(Registry),
    Adaptive(Adaptive),
    Analysis(Analysis),
    /// A bad argument (`ValueError`).
    Value(String),
    /// An exception raised in Python (an argument that did not convert).
    Python(PyErr),
}

macro_rules! from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Failure {
            fn from(e: $t) -> Self {
                Failure::$v(e)
            }
        }
    )*};
}
from!(Mesh => Mesh, Scheme => Scheme, Algebra => Algebra, Registry => Registry, Adaptive => Adaptive, Analysis => Analysis, PyErr => Python);

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        let (info, message) = match f {
            Failure::Value(m) => return PyValueError::new_err(m),
            Failure::Python(e) => return e,
            Failure::Mesh(e) => (mesh_info(&e), e.to_string()),
            Failure::Scheme(e) => (scheme_info(&e), e.to_string()),
            Failure::Algebra(e) => (algebra_info(&e), e.to_string()),
            Failure::Registry(e) => (registry_info(&e), e.to_string()),
            Failure::Adaptive(e) => (adaptive_info(&e), e.to_string()),
            Failure::Analysis(e) => (analysis_info(&e), e.to_string()),
        };
        let err = match info.class {
            Class::Mesh => MeshError::new_err(message),
            Class::Scheme => SchemeError::new_err(message),
            Class::Algebra => AlgebraError::new_err(message),
            Class::Registry => RegistryError::new_err(message),
            Class::Adaptive => AdaptiveError::new_err(message),
            Class::Analysis => AnalysisError::new_err(message),
        };
        Python::attach(|py| {
            let value = err.value(py);
            // Setting attributes on a fresh exception instance cannot fail
            // but for memory; the message is kept either way.
            let _ = value.setattr("kind", info.kind);
            for (name, field) in info.fields {
                let _ = match field {
                    Field::Int(v) => value.setattr(name, v),
                    Field::Text(t) => value.setattr(name, t),
                    Field::Pair(a, b) => value.setattr(name, (a, b)),
                    Field::Ints(v) => value.setattr(name, v),
                };
            }
        });
        err
    }
}

/// A `Result` whose error becomes a Python exception.
pub(crate) type Res<T> = Result<T, Failure>;

/// Issues a `DataLossWarning`.
pub(crate) fn warn(py: Python<'_>, message: &str) -> PyResult<()> {
    let warnings = py.import("warnings")?;
    warnings.call_method1("warn", (message, py.get_type::<DataLossWarning>(), 2))?;
    Ok(())
}
