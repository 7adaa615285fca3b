"""Local subdivision analysis: the subdivision matrix of a scheme around an
extraordinary vertex, its spectrum, limit and tangent masks, and its
characteristic map (see the library's chapter "Analysing a scheme")."""

from typing import Any, Dict, Iterable, List, Optional

from ._subla import (
    AnalysisError,
    LocalMatrix,
    Spectrum,
    characteristic_map,
    edge_subdivision_matrix,
    local_subdivision_matrix,
)


def analyze(
    scheme: str,
    valences: Iterable[int],
    *,
    configuration: str = "interior",
    across: Optional[int] = None,
    rings: int = 1,
    levels: int = 3,
) -> List[Dict[str, Any]]:
    """One report per valence, as ``subla analyze --json`` writes it: the
    matrix size, the eigenvalues (by decreasing modulus, with their Fourier
    indices), the classical conditions, the limit mask and, at interior
    vertices, the characteristic map's verdict (or the error that prevented
    it). ``configuration`` as :func:`local_subdivision_matrix`."""
    reports: List[Dict[str, Any]] = []
    for k in valences:
        s = local_subdivision_matrix(scheme, k, rings=rings, configuration=configuration, across=across)
        sp = s.spectrum()
        report = {
            "valence": k,
            "size": s.matrix.shape[0],
            "eigenvalues": list(sp.values),
            "fourier": sp.fourier,
            "conditions": sp.conditions,
            "limit_mask": s.limit_mask(),
        }
        if configuration not in ("interior", "boundary"):
            report["characteristic_map"] = None
        else:
            try:
                m = characteristic_map(scheme, k, levels=levels, configuration=configuration)
                report["characteristic_map"] = {
                    "regular": m["regular"],
                    "injective": m["injective"],
                    "area_range": m["area_range"],
                    "triangles": len(m["triangles"]),
                }
            except AnalysisError as e:
                report["characteristic_map"] = {"error": e.kind}
        reports.append(report)
    return reports


__all__ = [
    "LocalMatrix",
    "Spectrum",
    "analyze",
    "characteristic_map",
    "edge_subdivision_matrix",
    "local_subdivision_matrix",
]
