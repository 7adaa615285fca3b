// OpenSubdiv's uniform refinement of face-varying data, for the face-varying
// bench: the caller passes the control mesh and one face-varying channel as
// plain arrays; the shim builds the refiner (TopologyRefinerFactory over a
// TopologyDescriptor with one FVarChannel), refines it uniformly, and then
// refines two-component data level by level with PrimvarRefinerReal<double>:
// InterpolateFaceVarying for the channel's values, Interpolate for vertex
// data of the same width (the vertex refinement it is compared with).
//
// The buffers of every level are allocated once, when the handle is made,
// so that the timed calls do nothing but OpenSubdiv's interpolation and the
// copy of the finest level out.
//
// Errors never cross the C boundary as exceptions: constructors return null
// and the calls return -1.

#include <opensubdiv/far/primvarRefiner.h>
#include <opensubdiv/far/topologyDescriptor.h>
#include <opensubdiv/far/topologyRefiner.h>
#include <opensubdiv/far/topologyRefinerFactory.h>

#include "osd_common.h"

#include <cstdint>
#include <memory>
#include <vector>

using namespace OpenSubdiv;

namespace {

// A primvar of two doubles (a texture coordinate) with the interface
// PrimvarRefinerReal expects.
struct Uv {
    double x[2];

    void Clear(void * = 0) { x[0] = x[1] = 0.0; }

    void AddWithWeight(Uv const &src, double w) {
        x[0] += w * src.x[0];
        x[1] += w * src.x[1];
    }
};

} // namespace

struct SublaOsdFVar {
    std::unique_ptr<Far::TopologyRefiner> refiner;
    bool has_channel;
    // Every level's values, level after level (face-varying and vertex).
    std::vector<Uv> fvar;
    std::vector<Uv> vertex;
};

extern "C" {

// Builds the refiner (Catmull-Clark, or Loop when `loop` is nonzero) with the
// options given as Sdc::Options' enums (numbers), one face-varying channel of
// `num_values` values indexed per face corner by `value_indices` (no channel
// when `num_values` is negative) under `fvar_mode`
// (Sdc::Options::FVarLinearInterpolation), and refines it uniformly to
// `level` (full topology in the last level). Returns null on failure.
SublaOsdFVar *subla_osd_fvar_new(int num_vertices, int num_faces, int const *face_counts, int const *face_verts,
                                 int num_creases, int const *crease_pairs, float const *crease_weights,
                                 int num_corners, int const *corner_vertices, float const *corner_weights,
                                 int num_holes, int const *holes, int boundary, int crease_method,
                                 int triangle_subdivision, int loop, int num_values, int const *value_indices,
                                 int fvar_mode, int level) {
    try {
        Far::TopologyDescriptor d =
            subla_osd::descriptor(num_vertices, num_faces, face_counts, face_verts, num_creases, crease_pairs,
                                  crease_weights, num_corners, corner_vertices, corner_weights, num_holes, holes);
        Far::TopologyDescriptor::FVarChannel channel;
        if (num_values >= 0) {
            channel.numValues = num_values;
            channel.valueIndices = value_indices;
            d.numFVarChannels = 1;
            d.fvarChannels = &channel;
        }

        Sdc::Options sdc = subla_osd::options(boundary, crease_method, triangle_subdivision);
        sdc.SetFVarLinearInterpolation(static_cast<Sdc::Options::FVarLinearInterpolation>(fvar_mode));

        typedef Far::TopologyRefinerFactory<Far::TopologyDescriptor> Factory;
        std::unique_ptr<Far::TopologyRefiner> refiner(Factory::Create(
            d, Factory::Options(loop ? Sdc::SCHEME_LOOP : Sdc::SCHEME_CATMARK, sdc)));
        if (!refiner) {
            return nullptr;
        }
        Far::TopologyRefiner::UniformOptions options(level);
        options.fullTopologyInLastLevel = true;
        refiner->RefineUniform(options);

        SublaOsdFVar *h = new SublaOsdFVar;
        h->has_channel = num_values >= 0;
        h->refiner = std::move(refiner);
        return h;
    } catch (...) {
        return nullptr;
    }
}

// Allocates the buffers of every level (face-varying values when the
// refiner has the channel, and vertex data). Returns 0, or -1 on failure.
int subla_osd_fvar_alloc(SublaOsdFVar *h) {
    try {
        Far::TopologyRefiner const &r = *h->refiner;
        if (h->has_channel) {
            h->fvar.resize(r.GetNumFVarValuesTotal(0));
        }
        h->vertex.resize(r.GetNumVerticesTotal());
        return 0;
    } catch (...) {
        return -1;
    }
}

void subla_osd_fvar_free(SublaOsdFVar *h) { delete h; }

// The number of face-varying values at `level` (0 without the channel).
int subla_osd_fvar_num_values(SublaOsdFVar const *h, int level) {
    return h->has_channel ? h->refiner->GetLevel(level).GetNumFVarValues(0) : 0;
}

// The number of vertices at `level`.
int subla_osd_fvar_num_vertices(SublaOsdFVar const *h, int level) {
    return h->refiner->GetLevel(level).GetNumVertices();
}

// The number of face corners of the finest level.
int64_t subla_osd_fvar_finest_corners(SublaOsdFVar const *h) {
    Far::TopologyLevel const &l = h->refiner->GetLevel(h->refiner->GetMaxLevel());
    int64_t n = 0;
    for (int f = 0; f < l.GetNumFaces(); ++f) {
        n += l.GetFaceVertices(f).size();
    }
    return n;
}

// The finest level's face-varying value of every face corner, face after
// face (subla_osd_fvar_finest_corners of them). Returns the count, or
// -1 without the channel.
int64_t subla_osd_fvar_finest_indices(SublaOsdFVar const *h, int *out) {
    if (!h->has_channel) {
        return -1;
    }
    Far::TopologyLevel const &l = h->refiner->GetLevel(h->refiner->GetMaxLevel());
    int64_t n = 0;
    for (int f = 0; f < l.GetNumFaces(); ++f) {
        Far::ConstIndexArray v = l.GetFaceFVarValues(f, 0);
        for (int c = 0; c < v.size(); ++c) {
            out[n++] = v[c];
        }
    }
    return n;
}

// Refines `values` (two doubles per value of the base level) through every
// level with InterpolateFaceVarying and copies the finest level's values to
// `out`. Returns 0, or -1 without the channel or its buffers.
int subla_osd_fvar_interpolate(SublaOsdFVar *h, double const *values, double *out) {
    if (!h->has_channel || h->fvar.empty()) {
        return -1;
    }
    Far::TopologyRefiner const &r = *h->refiner;
    Uv *src = h->fvar.data();
    int n0 = r.GetLevel(0).GetNumFVarValues(0);
    for (int i = 0; i < n0; ++i) {
        src[i].x[0] = values[2 * i];
        src[i].x[1] = values[2 * i + 1];
    }
    Far::PrimvarRefinerReal<double> primvar(r);
    for (int level = 1; level <= r.GetMaxLevel(); ++level) {
        Uv *dst = src + r.GetLevel(level - 1).GetNumFVarValues(0);
        primvar.InterpolateFaceVarying(level, src, dst, 0);
        src = dst;
    }
    int n = r.GetLevel(r.GetMaxLevel()).GetNumFVarValues(0);
    for (int i = 0; i < n; ++i) {
        out[2 * i] = src[i].x[0];
        out[2 * i + 1] = src[i].x[1];
    }
    return 0;
}

// Refines `values` (two doubles per base vertex) through every level with
// Interpolate and copies the finest level's to `out`. Returns 0, or -1
// without buffers.
int subla_osd_fvar_interpolate_vertex(SublaOsdFVar *h, double const *values, double *out) {
    if (h->vertex.empty()) {
        return -1;
    }
    Far::TopologyRefiner const &r = *h->refiner;
    Uv *src = h->vertex.data();
    int n0 = r.GetLevel(0).GetNumVertices();
    for (int i = 0; i < n0; ++i) {
        src[i].x[0] = values[2 * i];
        src[i].x[1] = values[2 * i + 1];
    }
    Far::PrimvarRefinerReal<double> primvar(r);
    for (int level = 1; level <= r.GetMaxLevel(); ++level) {
        Uv *dst = src + r.GetLevel(level - 1).GetNumVertices();
        primvar.Interpolate(level, src, dst);
        src = dst;
    }
    int n = r.GetLevel(r.GetMaxLevel()).GetNumVertices();
    for (int i = 0; i < n; ++i) {
        out[2 * i] = src[i].x[0];
        out[2 * i + 1] = src[i].x[1];
    }
    return 0;
}

} // extern "C"
