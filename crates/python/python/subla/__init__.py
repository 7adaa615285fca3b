"""subla: mesh subdivision as sparse linear algebra.

Meshes (:class:`Mesh`), plans of every scheme of the registry
(:class:`Plan`, :func:`subdivide`, :func:`schemes`), face-varying channels
(:class:`FaceVaryingPlan`), the limit surface (:class:`LimitSurface`) and the
local subdivision analysis (:mod:`subla.analysis`). Vertex data are numpy
arrays (float64 or float32, any number of channels); operators are
``scipy.sparse.csr_matrix``; errors are :class:`SublaError` subclasses whose
``kind`` names the failure and whose attributes (``face``, ``vertex``,
``edge``, ``line``, ...) name the offending element.
"""

from . import _subla
from ._subla import (
    AdaptiveError,
    AlgebraError,
    AnalysisError,
    DataLossWarning,
    FaceVaryingPlan,
    LimitSurface,
    Mesh,
    MeshError,
    Plan,
    RegistryError,
    SchemeError,
    SublaError,
    schemes,
    subdivide,
)
from . import analysis, shapes

__version__ = _subla.__version__

__all__ = [
    "AdaptiveError",
    "AlgebraError",
    "AnalysisError",
    "DataLossWarning",
    "FaceVaryingPlan",
    "LimitSurface",
    "Mesh",
    "MeshError",
    "Plan",
    "RegistryError",
    "SchemeError",
    "SublaError",
    "analysis",
    "schemes",
    "shapes",
    "subdivide",
]
