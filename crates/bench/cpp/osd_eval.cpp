// OpenSubdiv's own limit evaluation loop, for the `eval` row of the adaptive
// bench: the caller passes the control mesh as plain arrays, the shim builds
// the refiner, the patch table and the patch map itself (so that it depends
// on no binding's private pointers), and evaluates position, d/du and d/dv
// at a list of (ptex face, u, v) samples the way OpenSubdiv's Far tutorials
// do: refine the primvar level by level, compute the local (end-cap) points,
// then per sample FindPatch, EvaluateBasis and a weighted sum over the
// patch's control points.
//
// Everything numeric is double: the patch table is built with double
// precision local point stencils (PatchTableFactory::Options::
// SetPatchPrecision<double>), the primvar refiner is PrimvarRefinerReal<double>
// and the basis is evaluated with EvaluateBasis<double>.
//
// Errors never cross the C boundary as exceptions: constructors return null
// and the evaluation returns -1.

#include <opensubdiv/far/patchMap.h>
#include <opensubdiv/far/patchTable.h>
#include <opensubdiv/far/patchTableFactory.h>
#include <opensubdiv/far/primvarRefiner.h>
#include <opensubdiv/far/stencilTable.h>
#include <opensubdiv/far/topologyDescriptor.h>
#include <opensubdiv/far/topologyRefiner.h>
#include <opensubdiv/far/topologyRefinerFactory.h>

#include "osd_common.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

using namespace OpenSubdiv;

namespace {

// The largest patch OpenSubdiv builds: a Catmull-Clark Gregory basis end cap
// (20 points); regular and B-spline end-cap patches have 16, Loop's
// triangular Gregory end caps 18 and its box-spline patches 12.
const int MAX_PATCH_POINTS = 20;

// A primvar of three doubles with the interface PrimvarRefinerReal and
// StencilTableReal::UpdateValues expect.
struct Point {
    double x[3];

    void Clear(void * = 0) { x[0] = x[1] = x[2] = 0.0; }

    void AddWithWeight(Point const &src, double w) {
        x[0] += w * src.x[0];
        x[1] += w * src.x[1];
        x[2] += w * src.x[2];
    }
};

} // namespace

struct SublaOsdEval {
    std::unique_ptr<Far::TopologyRefiner> refiner;
    std::unique_ptr<Far::PatchTable> table;
    std::unique_ptr<Far::PatchMap> map;
};

extern "C" {

// Builds the refiner (TopologyRefinerFactory<TopologyDescriptor>) of
// Catmull-Clark, or of Loop where `loop` is not zero, refines it
// adaptively to `isolation` (OpenSubdiv's default adaptive options
// otherwise) and creates the patch table with end caps `end_cap`
// (Far::PatchTableFactory::Options::EndCapType, as a number) and double
// precision. `boundary`, `crease_method` and `triangle_subdivision` are
// Sdc::Options' enums as numbers. The patch map is built apart, by
// subla_osd_eval_build_map. Returns null on failure.
SublaOsdEval *subla_osd_eval_new(int num_vertices, int num_faces, int const *face_counts, int const *face_verts,
                                 int num_creases, int const *crease_pairs, float const *crease_weights,
                                 int num_corners, int const *corner_vertices, float const *corner_weights,
                                 int num_holes, int const *holes, int boundary, int crease_method,
                                 int triangle_subdivision, int loop, int isolation, int end_cap) {
    try {
        Far::TopologyDescriptor d =
            subla_osd::descriptor(num_vertices, num_faces, face_counts, face_verts, num_creases, crease_pairs,
                                  crease_weights, num_corners, corner_vertices, corner_weights, num_holes, holes);

        Sdc::Options sdc = subla_osd::options(boundary, crease_method, triangle_subdivision);

        typedef Far::TopologyRefinerFactory<Far::TopologyDescriptor> Factory;
        std::unique_ptr<Far::TopologyRefiner> refiner(
            Factory::Create(d, Factory::Options(loop ? Sdc::SCHEME_LOOP : Sdc::SCHEME_CATMARK, sdc)));
        if (!refiner) {
            return nullptr;
        }
        refiner->RefineAdaptive(Far::TopologyRefiner::AdaptiveOptions(isolation));

        Far::PatchTableFactory::Options options;
        options.SetEndCapType(static_cast<Far::PatchTableFactory::Options::EndCapType>(end_cap));
        options.SetPatchPrecision<double>();
        std::unique_ptr<Far::PatchTable> table(Far::PatchTableFactory::Create(*refiner, options));
        if (!table) {
            return nullptr;
        }
        for (int a = 0; a < table->GetNumPatchArrays(); ++a) {
            if (table->GetPatchArrayDescriptor(a).GetNumControlVertices() > MAX_PATCH_POINTS) {
                return nullptr;
            }
        }
        SublaOsdEval *h = new SublaOsdEval;
        h->refiner = std::move(refiner);
        h->table = std::move(table);
        return h;
    } catch (...) {
        return nullptr;
    }
}

// Builds the Far::PatchMap of the patch table (topology only, once per
// table). Returns 0, or -1 on failure.
int subla_osd_eval_build_map(SublaOsdEval *h) {
    try {
        h->map.reset(new Far::PatchMap(*h->table));
        return 0;
    } catch (...) {
        return -1;
    }
}

// Number of patches in the table.
int subla_osd_eval_num_patches(SublaOsdEval const *h) { return h->table->GetNumPatchesTotal(); }

// Number of refined and local points (the xyz triples subla_osd_eval_run's
// `points_buf` holds).
int64_t subla_osd_eval_num_points(SublaOsdEval const *h) {
    return int64_t(h->refiner->GetNumVerticesTotal()) + h->table->GetNumLocalPoints();
}

// Number of ptex faces of the control mesh (the face ids FindPatch takes).
int subla_osd_eval_num_ptex_faces(SublaOsdEval const *h) { return h->table->GetNumPtexFaces(); }

void subla_osd_eval_free(SublaOsdEval *h) { delete h; }

// The limit at `n` samples from the control points `control` (xyz per
// vertex, as many as the descriptor's vertices): every refined level's
// points (PrimvarRefinerReal<double>::Interpolate level by level), the local
// points (the double local point stencil table's UpdateValues), then per
// sample FindPatch, EvaluateBasis (position, d/du, d/dv weights, derivatives
// with respect to the ptex face's u and v) and the weighted sums over
// GetPatchVertices. Writes xyz per sample to `pos`, `du` and `dv` (NaN where
// no patch covers the sample). The refined and local points go to
// `points_buf` (xyz for subla_osd_eval_num_points points) where it is not
// null, else to a vector allocated here. Returns the number of samples no
// patch covers, or -1 on failure (the patch map not built, or out of
// memory).
int64_t subla_osd_eval_run(SublaOsdEval const *h, double const *control, int64_t n, int const *ptex, double const *u,
                           double const *v, double *pos, double *du, double *dv, double *points_buf) {
    try {
        if (!h->map) {
            return -1;
        }
        Far::TopologyRefiner const &refiner = *h->refiner;
        Far::PatchTable const &table = *h->table;
        Far::PatchMap const &map = *h->map;

        int num_refined = refiner.GetNumVerticesTotal();
        int num_local = table.GetNumLocalPoints();
        std::vector<Point> owned(points_buf ? 0 : num_refined + num_local);
        Point *points = points_buf ? reinterpret_cast<Point *>(points_buf) : owned.data();
        int num_control = refiner.GetLevel(0).GetNumVertices();
        for (int i = 0; i < num_control; ++i) {
            for (int k = 0; k < 3; ++k) {
                points[i].x[k] = control[3 * i + k];
            }
        }

        Far::PrimvarRefinerReal<double> primvar(refiner);
        Point *src = points;
        for (int level = 1; level <= refiner.GetMaxLevel(); ++level) {
            Point *dst = src + refiner.GetLevel(level - 1).GetNumVertices();
            primvar.Interpolate(level, src, dst);
            src = dst;
        }
        if (num_local > 0) {
            table.GetLocalPointStencilTable<double>()->UpdateValues(points, points + num_refined);
        }

        double wp[MAX_PATCH_POINTS], wu[MAX_PATCH_POINTS], wv[MAX_PATCH_POINTS];
        double const nan = std::numeric_limits<double>::quiet_NaN();
        int64_t missing = 0;
        for (int64_t i = 0; i < n; ++i) {
            double *p = pos + 3 * i, *pu = du + 3 * i, *pv = dv + 3 * i;
            Far::PatchTable::PatchHandle const *handle = map.FindPatch(ptex[i], u[i], v[i]);
            if (!handle) {
                for (int k = 0; k < 3; ++k) {
                    p[k] = pu[k] = pv[k] = nan;
                }
                ++missing;
                continue;
            }
            table.EvaluateBasis(*handle, u[i], v[i], wp, wu, wv);
            Far::ConstIndexArray cvs = table.GetPatchVertices(*handle);
            double ap[3] = {0, 0, 0}, au[3] = {0, 0, 0}, av[3] = {0, 0, 0};
            for (int c = 0; c < cvs.size(); ++c) {
                double const *x = points[cvs[c]].x;
                for (int k = 0; k < 3; ++k) {
                    ap[k] += wp[c] * x[k];
                    au[k] += wu[c] * x[k];
                    av[k] += wv[c] * x[k];
                }
            }
            for (int k = 0; k < 3; ++k) {
                p[k] = ap[k];
                pu[k] = au[k];
                pv[k] = av[k];
            }
        }
        return missing;
    } catch (...) {
        return -1;
    }
}

} // extern "C"
