// What both shims (osd_eval.cpp, osd_fvar.cpp) build the same way: the
// topology descriptor from plain arrays, and Sdc::Options from its enums
// passed as numbers.

#ifndef SUBLA_OSD_COMMON_H
#define SUBLA_OSD_COMMON_H

#include <opensubdiv/far/topologyDescriptor.h>
#include <opensubdiv/sdc/options.h>

namespace subla_osd {

// A descriptor over the caller's arrays (kept by pointer: they must outlive
// the factory call).
inline OpenSubdiv::Far::TopologyDescriptor descriptor(int num_vertices, int num_faces, int const *face_counts,
                                                      int const *face_verts, int num_creases,
                                                      int const *crease_pairs, float const *crease_weights,
                                                      int num_corners, int const *corner_vertices,
                                                      float const *corner_weights, int num_holes, int const *holes) {
    OpenSubdiv::Far::TopologyDescriptor d;
    d.numVertices = num_vertices;
    d.numFaces = num_faces;
    d.numVertsPerFace = face_counts;
    d.vertIndicesPerFace = face_verts;
    d.numCreases = num_creases;
    d.creaseVertexIndexPairs = crease_pairs;
    d.creaseWeights = crease_weights;
    d.numCorners = num_corners;
    d.cornerVertexIndices = corner_vertices;
    d.cornerWeights = corner_weights;
    d.numHoles = num_holes;
    d.holeIndices = holes;
    return d;
}

// Sdc::Options from VtxBoundaryInterpolation, CreasingMethod and
// TriangleSubdivision as numbers.
inline OpenSubdiv::Sdc::Options options(int boundary, int crease_method, int triangle_subdivision) {
    using OpenSubdiv::Sdc::Options;
    Options sdc;
    sdc.SetVtxBoundaryInterpolation(static_cast<Options::VtxBoundaryInterpolation>(boundary));
    sdc.SetCreasingMethod(static_cast<Options::CreasingMethod>(crease_method));
    sdc.SetTriangleSubdivision(static_cast<Options::TriangleSubdivision>(triangle_subdivision));
    return sdc;
}

} // namespace subla_osd

#endif
