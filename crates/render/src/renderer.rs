//! The wgpu side: pipelines, targets, the render pass and the readback.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, mpsc};

use subla_gpu::wgpu;
use subla_gpu::wgpu::util::DeviceExt;
use subla_gpu::{GpuContext, GpuError};

use crate::camera::{Camera, FRAME_FLOATS};
use crate::error::RenderError;
use crate::image::RgbaImage;
use crate::mesh::{self, LINE_FLOATS, MESH_VERTEX_FLOATS, MeshView, Normalise};
use crate::options::{OverlayDepth, RenderOptions};
use crate::shaders;

/// The colour target: 8-bit sRGB, so that shading happens in linear light.
const COLOUR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Vertex buffers are at most this large unless the options say otherwise.
const DEFAULT_CHUNK_BYTES: u64 = 64 << 20;
/// How long a readback waits for its map callback after the device is idle.
const MAP_CALLBACK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

fn convert_error(operation: &'static str, error: wgpu::Error) -> GpuError {
    match error {
        wgpu::Error::OutOfMemory { source } => {
            GpuError::OutOfMemory { operation, message: one_line(&source.to_string()) }
        }
        wgpu::Error::Validation { description, .. } => {
            GpuError::Validation { operation, message: one_line(&description) }
        }
        wgpu::Error::Internal { description, .. } => GpuError::Internal { operation, message: one_line(&description) },
    }
}

/// wgpu's multi-line report ("Validation Error", "Caused by:", the causes
/// indented below) as one line: its lines joined by `: `.
fn one_line(message: &str) -> String {
    message.lines().map(str::trim).filter(|l| !l.is_empty() && *l != "Caused by:").collect::<Vec<_>>().join(": ")
}

/// Runs `f` inside validation, out-of-memory and internal error scopes; an
/// error captured there wins over `f`'s own result.
fn scoped<R>(
    ctx: &GpuContext,
    operation: &'static str,
    f: impl FnOnce() -> Result<R, RenderError>,
) -> Result<R, RenderError> {
    let device = ctx.device();
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let result = f();
    let validation = pollster::block_on(validation.pop());
    let internal = pollster::block_on(internal.pop());
    let oom = pollster::block_on(oom.pop());
    // Out of memory first: a resource that could not be allocated makes
    // every later use of it a validation error, which says less.
    if let Some(e) = oom.or(validation).or(internal) {
        return Err(convert_error(operation, e).into());
    }
    result
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Mesh,
    LinesTested,
    LinesOnTop,
}

/// Renders meshes on one [`GpuContext`], building its pipelines once (per
/// sample count and overlay mode) and reusing them: keep one for a series
/// of images. [`render`](crate::render) makes one per call.
#[derive(Debug)]
pub struct Renderer<'c> {
    ctx: &'c GpuContext,
    module: wgpu::ShaderModule,
    bind_layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    pipelines: Mutex<HashMap<(Kind, u32), Arc<wgpu::RenderPipeline>>>,
}

impl<'c> Renderer<'c> {
    /// Compiles the shader on `ctx` (pipelines are built on first use).
    ///
    /// # Errors
    /// [`RenderError::Gpu`]: the shader does not validate (a bug), or the
    /// device fails.
    pub fn new(ctx: &'c GpuContext) -> Result<Self, RenderError> {
        // naga's diagnostics name the line; wgpu's would only say "invalid".
        subla_gpu::shaders::validate(shaders::RENDER_MESH)?;
        let device = ctx.device();
        let (module, bind_layout, pipeline_layout) = scoped(ctx, "render shader creation", || {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("render_mesh.wgsl"),
                source: wgpu::ShaderSource::Wgsl(shaders::RENDER_MESH.into()),
            });
            let bind_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("subla-render frame"),
                entries: &[wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                }],
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("subla-render"),
                bind_group_layouts: &[Some(&bind_layout)],
                immediate_size: 0,
            });
            Ok((module, bind_layout, pipeline_layout))
        })?;
        Ok(Self { ctx, module, bind_layout, pipeline_layout, pipelines: Mutex::new(HashMap::new()) })
    }

    /// The context this renderer draws with.
    pub fn context(&self) -> &'c GpuContext {
        self.ctx
    }

    /// Samples per pixel used when `msaa` is asked for: 4 where the
    /// device supports 4× multisampling (and its resolve) for the colour
    /// and depth formats, else 1.
    pub fn sample_count(&self, msaa: bool) -> u32 {
        let features = self.ctx.device().features();
        let colour = COLOUR_FORMAT.guaranteed_format_features(features).flags;
        let depth = DEPTH_FORMAT.guaranteed_format_features(features).flags;
        let x4 = wgpu::TextureFormatFeatureFlags::MULTISAMPLE_X4;
        let resolve = wgpu::TextureFormatFeatureFlags::MULTISAMPLE_RESOLVE;
        if msaa && colour.contains(x4 | resolve) && depth.contains(x4) { 4 } else { 1 }
    }

    /// The pipeline of `kind` at `samples` per pixel, built on first use.
    fn pipeline(&self, kind: Kind, samples: u32) -> Result<Arc<wgpu::RenderPipeline>, RenderError> {
        let mut cache = self.pipelines.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = cache.get(&(kind, samples)) {
            return Ok(Arc::clone(p));
        }
        let pipeline =
            Arc::new(scoped(self.ctx, "render pipeline creation", || Ok(self.create_pipeline(kind, samples)))?);
        cache.insert((kind, samples), Arc::clone(&pipeline));
        Ok(pipeline)
    }

    fn create_pipeline(&self, kind: Kind, samples: u32) -> wgpu::RenderPipeline {
        let (vs, fs) = kind.entry_points();
        self.ctx.device().create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(vs),
            layout: Some(&self.pipeline_layout),
            vertex: wgpu::VertexState {
                module: &self.module,
                entry_point: Some(vs),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                buffers: &[Some(kind.vertex_layout())],
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::TriangleList,
                strip_index_format: None,
                front_face: wgpu::FrontFace::Ccw,
                // Two-sided: both windings are drawn and lit.
                cull_mode: None,
                unclipped_depth: false,
                polygon_mode: wgpu::PolygonMode::Fill,
                conservative: false,
            },
            depth_stencil: Some(wgpu::DepthStencilState {
                format: DEPTH_FORMAT,
                depth_write_enabled: Some(kind == Kind::Mesh),
                depth_compare: Some(kind.depth_compare()),
                stencil: wgpu::StencilState::default(),
                bias: wgpu::DepthBiasState::default(),
            }),
            multisample: wgpu::MultisampleState { count: samples, mask: !0, alpha_to_coverage_enabled: false },
            fragment: Some(wgpu::FragmentState {
                module: &self.module,
                entry_point: Some(fs),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: COLOUR_FORMAT,
                    blend: Some(kind.blend()),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        })
    }

    /// Renders `mesh` as `opts` says (see the [crate docs](crate)).
    ///
    /// # Errors
    /// Bad options ([`RenderError::InvalidOption`],
    /// [`RenderError::ImageSize`]), bad mesh or overlay data (as
    /// [`MeshView::validate`], and [`RenderError::SegmentIndex`]), buffers
    /// over the device's limits ([`RenderError::TooLarge`]), render targets
    /// the device cannot allocate ([`RenderError::ImageMemory`]), an image
    /// in which nothing was drawn ([`RenderError::EmptyPicture`]), and
    /// device failures ([`RenderError::Gpu`]).
    pub fn render(&self, mesh: &MeshView<'_>, opts: &RenderOptions) -> Result<RgbaImage, RenderError> {
        let limits = self.ctx.limits();
        validate(mesh, opts, limits)?;
        let norm = Normalise::fit(mesh, opts.cage.as_ref(), &opts.creases);
        let frame = frame_uniform(opts);
        let geometry = Geometry::new(mesh, &norm, opts, limits)?;
        let readback = Readback::new(opts.width, opts.height, limits)?;
        let samples = self.sample_count(opts.msaa);
        let mesh_pipeline = self.pipeline(Kind::Mesh, samples)?;
        let line_pipeline = if geometry.lines.is_empty() {
            None
        } else {
            Some(self.pipeline(Kind::lines(opts.overlay_depth), samples)?)
        };
        let targets = self.targets(opts, readback.size(), samples)?;
        let bytes = scoped(self.ctx, "render", || {
            let device = self.ctx.device();
            let bind_group = self.frame_bind_group(&frame);
            let (triangles, lines) = geometry.upload(device);
            let mut encoder =
                device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("subla-render") });
            {
                let mut pass = targets.begin_pass(&mut encoder, clear_colour(opts.background));
                pass.set_bind_group(0, &bind_group, &[]);
                draw(&mut pass, &mesh_pipeline, &triangles, |vertices| (0..vertices, 0..1));
                if let Some(p) = &line_pipeline {
                    // One instance per segment, a quad of two triangles each.
                    draw(&mut pass, p, &lines, |instances| (0..6, 0..instances));
                }
            }
            let staging = readback.copy(device, &mut encoder, targets.output());
            self.ctx.queue().submit([encoder.finish()]);
            read_back(self.ctx, &staging)
        })?;
        let image = readback.image(&bytes);
        if !opts.allow_empty && image.pixels.chunks_exact(4).all(|p| p == &image.pixels[..4]) {
            return Err(RenderError::EmptyPicture { pixels: u64::from(opts.width) * u64::from(opts.height) });
        }
        Ok(image)
    }

    /// The render targets of an image of `size`, or
    /// [`RenderError::ImageMemory`] when the device cannot allocate them.
    fn targets(&self, opts: &RenderOptions, size: wgpu::Extent3d, samples: u32) -> Result<Targets, RenderError> {
        let targets = scoped(self.ctx, "render targets", || Ok(Targets::new(self.ctx.device(), size, samples)));
        match targets {
            Err(RenderError::Gpu(GpuError::OutOfMemory { .. })) => Err(RenderError::ImageMemory {
                width: opts.width,
                height: opts.height,
                bytes: Targets::bytes(size, samples),
                max: self.ctx.limits().max_texture_dimension_2d,
            }),
            r => r,
        }
    }

    /// The bind group of the frame's uniform block.
    fn frame_bind_group(&self, frame: &[f32; FRAME_FLOATS]) -> wgpu::BindGroup {
        let device = self.ctx.device();
        let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("subla-render frame"),
            contents: bytemuck::cast_slice(frame),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("subla-render frame"),
            layout: &self.bind_layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() }],
        })
    }
}

impl Kind {
    /// The overlay pipeline of `depth`.
    fn lines(depth: OverlayDepth) -> Self {
        match depth {
            OverlayDepth::Tested { .. } => Kind::LinesTested,
            OverlayDepth::OnTop => Kind::LinesOnTop,
        }
    }

    /// Vertex and fragment entry points.
    fn entry_points(self) -> (&'static str, &'static str) {
        match self {
            Kind::Mesh => ("mesh_vs", "mesh_fs"),
            Kind::LinesTested | Kind::LinesOnTop => ("line_vs", "line_fs"),
        }
    }

    /// Mesh vertices: position, normal; line instances: endpoints, colour,
    /// width.
    fn vertex_layout(self) -> wgpu::VertexBufferLayout<'static> {
        const MESH: [wgpu::VertexAttribute; 3] = [
            wgpu::VertexAttribute { format: wgpu::VertexFormat::Float32x3, offset: 0, shader_location: 0 },
            wgpu::VertexAttribute { format: wgpu::VertexFormat::Float32x3, offset: 12, shader_location: 1 },
            wgpu::VertexAttribute { format: wgpu::VertexFormat::Float32x3, offset: 24, shader_location: 2 },
        ];
        const LINE: [wgpu::VertexAttribute; 4] = [
            wgpu::VertexAttribute { format: wgpu::VertexFormat::Float32x3, offset: 0, shader_location: 0 },
            wgpu::VertexAttribute { format: wgpu::VertexFormat::Float32x3, offset: 12, shader_location: 1 },
            wgpu::VertexAttribute { format: wgpu::VertexFormat::Float32x4, offset: 24, shader_location: 2 },
            wgpu::VertexAttribute { format: wgpu::VertexFormat::Float32, offset: 40, shader_location: 3 },
        ];
        match self {
            Kind::Mesh => wgpu::VertexBufferLayout {
                array_stride: (MESH_VERTEX_FLOATS * 4) as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &MESH,
            },
            Kind::LinesTested | Kind::LinesOnTop => wgpu::VertexBufferLayout {
                array_stride: (LINE_FLOATS * 4) as u64,
                step_mode: wgpu::VertexStepMode::Instance,
                attributes: &LINE,
            },
        }
    }

    /// Only the surface writes depth; tested overlays pass on equal depth,
    /// the others always.
    fn depth_compare(self) -> wgpu::CompareFunction {
        match self {
            Kind::Mesh => wgpu::CompareFunction::Less,
            Kind::LinesTested => wgpu::CompareFunction::LessEqual,
            Kind::LinesOnTop => wgpu::CompareFunction::Always,
        }
    }

    /// The surface replaces; overlays are blended straight-alpha "over".
    fn blend(self) -> wgpu::BlendState {
        match self {
            Kind::Mesh => wgpu::BlendState::REPLACE,
            Kind::LinesTested | Kind::LinesOnTop => wgpu::BlendState {
                color: wgpu::BlendComponent {
                    src_factor: wgpu::BlendFactor::SrcAlpha,
                    dst_factor: wgpu::BlendFactor::OneMinusSrcAlpha,
                    operation: wgpu::BlendOperation::Add,
                },
                alpha: wgpu::BlendComponent {
                    src_factor: wgpu::BlendFactor::One,
                    dst_factor: wgpu::BlendFactor::OneMinusSrcAlpha,
                    operation: wgpu::BlendOperation::Add,
                },
            },
        }
    }
}

/// Checks the options (against the device's largest texture), the mesh and
/// the overlays.
fn validate(mesh: &MeshView<'_>, opts: &RenderOptions, limits: &wgpu::Limits) -> Result<(), RenderError> {
    check_options(opts, limits.max_texture_dimension_2d)?;
    mesh.validate()?;
    if let Some(cage) = &opts.cage {
        cage.validate()?;
    }
    mesh::validate_creases(mesh, &opts.creases)
}

/// The uniform block of the camera fitted to `opts`, with the base colour
/// and the overlays' depth bias.
fn frame_uniform(opts: &RenderOptions) -> [f32; FRAME_FLOATS] {
    let bias = match opts.overlay_depth {
        OverlayDepth::Tested { bias } => bias,
        OverlayDepth::OnTop => 0.0,
    };
    Camera::fit(opts).frame(opts, mesh::linear_rgba(opts.base_colour), bias)
}

/// Vertex buffers, each with its vertex or instance count.
type Buffers = Vec<(wgpu::Buffer, u32)>;

/// What is drawn, normalised and cut into vertex buffers no larger than
/// the chunk size.
struct Geometry {
    /// Triangle-list vertices, one buffer's worth each.
    triangles: Vec<Vec<f32>>,
    /// Line instances, all of them.
    lines: Vec<f32>,
    /// Line instances in one buffer.
    max_lines: usize,
}

impl Geometry {
    fn new(
        mesh: &MeshView<'_>,
        norm: &Normalise,
        opts: &RenderOptions,
        limits: &wgpu::Limits,
    ) -> Result<Self, RenderError> {
        let chunk_bytes = opts.max_buffer_bytes.unwrap_or(DEFAULT_CHUNK_BYTES).min(limits.max_buffer_size);
        let triangle_bytes = (3 * MESH_VERTEX_FLOATS * 4) as u64;
        let line_bytes = (LINE_FLOATS * 4) as u64;
        for (what, bytes) in
            [("one triangle's vertex buffer", triangle_bytes), ("one line's vertex buffer", line_bytes)]
        {
            check_buffer_size(what, bytes, limits)?;
        }
        // Vertex and instance counts of one draw are u32.
        let max_triangles = (chunk_bytes / triangle_bytes).clamp(1, u64::from(u32::MAX / 3)) as usize;
        let max_lines = (chunk_bytes / line_bytes).clamp(1, u64::from(u32::MAX)) as usize;
        let triangles = mesh::triangles(mesh, norm, opts.shading, max_triangles);
        let lines = mesh::lines(
            mesh,
            norm,
            opts.cage.as_ref().map(|c| (c, mesh::linear_rgba(opts.cage_colour), opts.cage_width)),
            (&opts.creases, mesh::linear_rgba(opts.crease_colour), opts.crease_width),
        );
        Ok(Self { triangles, lines, max_lines })
    }

    /// Vertex buffers of the triangles and of the lines, each with its
    /// vertex or instance count.
    fn upload(&self, device: &wgpu::Device) -> (Buffers, Buffers) {
        let upload = |label: &'static str, data: &[f32]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(data),
                usage: wgpu::BufferUsages::VERTEX,
            })
        };
        let triangles = self
            .triangles
            .iter()
            .map(|c| (upload("subla-render triangles", c), (c.len() / MESH_VERTEX_FLOATS) as u32))
            .collect();
        let lines = self
            .lines
            .chunks(self.max_lines * LINE_FLOATS)
            .map(|c| (upload("subla-render lines", c), (c.len() / LINE_FLOATS) as u32))
            .collect();
        (triangles, lines)
    }
}

/// `bytes` in one buffer, checked against the device's largest buffer.
fn check_buffer_size(what: &'static str, bytes: u64, limits: &wgpu::Limits) -> Result<(), RenderError> {
    if bytes > limits.max_buffer_size {
        return Err(RenderError::TooLarge {
            what,
            bytes,
            limit: "max_buffer_size",
            limit_value: limits.max_buffer_size,
        });
    }
    Ok(())
}

/// Draws each buffer with `pipeline`; `range(n)` gives the vertex and
/// instance ranges of a buffer of `n` items.
fn draw(
    pass: &mut wgpu::RenderPass<'_>,
    pipeline: &wgpu::RenderPipeline,
    buffers: &[(wgpu::Buffer, u32)],
    range: impl Fn(u32) -> (std::ops::Range<u32>, std::ops::Range<u32>),
) {
    pass.set_pipeline(pipeline);
    for (buffer, n) in buffers {
        pass.set_vertex_buffer(0, buffer.slice(..));
        let (vertices, instances) = range(*n);
        pass.draw(vertices, instances);
    }
}

/// The background as the linear clear colour of the sRGB target.
fn clear_colour(bg: [u8; 4]) -> wgpu::Color {
    wgpu::Color {
        r: mesh::srgb_to_linear(bg[0]),
        g: mesh::srgb_to_linear(bg[1]),
        b: mesh::srgb_to_linear(bg[2]),
        a: f64::from(bg[3]) / 255.0,
    }
}

/// The colour and depth targets, with the single-sample colour texture
/// the multisampled one resolves into.
struct Targets {
    colour: wgpu::Texture,
    resolve: Option<wgpu::Texture>,
    colour_view: wgpu::TextureView,
    resolve_view: Option<wgpu::TextureView>,
    depth_view: wgpu::TextureView,
}

impl Targets {
    fn new(device: &wgpu::Device, size: wgpu::Extent3d, samples: u32) -> Self {
        let target = |label: &'static str, format, samples, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size,
                mip_level_count: 1,
                sample_count: samples,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let attachment = wgpu::TextureUsages::RENDER_ATTACHMENT;
        let copy = wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC;
        let (colour, resolve) = if samples > 1 {
            (
                target("subla-render colour (multisampled)", COLOUR_FORMAT, samples, attachment),
                Some(target("subla-render colour", COLOUR_FORMAT, 1, copy)),
            )
        } else {
            (target("subla-render colour", COLOUR_FORMAT, 1, copy), None)
        };
        let depth = target("subla-render depth", DEPTH_FORMAT, samples, attachment);
        let colour_view = colour.create_view(&wgpu::TextureViewDescriptor::default());
        let resolve_view = resolve.as_ref().map(|t| t.create_view(&wgpu::TextureViewDescriptor::default()));
        let depth_view = depth.create_view(&wgpu::TextureViewDescriptor::default());
        Self { colour, resolve, colour_view, resolve_view, depth_view }
    }

    /// Bytes of the targets of an image of `size` (4 bytes per sample for
    /// colour and for depth, plus the resolved colour).
    fn bytes(size: wgpu::Extent3d, samples: u32) -> u64 {
        let pixels = u64::from(size.width) * u64::from(size.height);
        let resolve = if samples > 1 { 4 * pixels } else { 0 };
        8 * pixels * u64::from(samples) + resolve
    }

    /// The texture that holds the finished image.
    fn output(&self) -> &wgpu::Texture {
        self.resolve.as_ref().unwrap_or(&self.colour)
    }

    /// The render pass: colour cleared to `clear` (and resolved), depth
    /// cleared to the far plane and discarded after.
    fn begin_pass<'e>(&self, encoder: &'e mut wgpu::CommandEncoder, clear: wgpu::Color) -> wgpu::RenderPass<'e> {
        encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("subla-render"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &self.colour_view,
                depth_slice: None,
                resolve_target: self.resolve_view.as_ref(),
                ops: wgpu::Operations { load: wgpu::LoadOp::Clear(clear), store: wgpu::StoreOp::Store },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &self.depth_view,
                depth_ops: Some(wgpu::Operations { load: wgpu::LoadOp::Clear(1.0), store: wgpu::StoreOp::Discard }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        })
    }
}

/// The image's way back to the host: a staging buffer with rows padded to
/// wgpu's copy alignment.
struct Readback {
    width: u32,
    height: u32,
    row_bytes: u64,
    padded_row: u64,
}

impl Readback {
    fn new(width: u32, height: u32, limits: &wgpu::Limits) -> Result<Self, RenderError> {
        let row_bytes = u64::from(width) * 4;
        let padded_row = row_bytes.next_multiple_of(u64::from(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT));
        let readback = Self { width, height, row_bytes, padded_row };
        check_buffer_size("image readback buffer", readback.staging_bytes(), limits)?;
        Ok(readback)
    }

    fn staging_bytes(&self) -> u64 {
        self.padded_row * u64::from(self.height)
    }

    fn size(&self) -> wgpu::Extent3d {
        wgpu::Extent3d { width: self.width, height: self.height, depth_or_array_layers: 1 }
    }

    /// Encodes the copy of `texture` into a new staging buffer.
    fn copy(&self, device: &wgpu::Device, encoder: &mut wgpu::CommandEncoder, texture: &wgpu::Texture) -> wgpu::Buffer {
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("subla-render readback"),
            size: self.staging_bytes(),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &staging,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(self.padded_row as u32),
                    rows_per_image: Some(self.height),
                },
            },
            self.size(),
        );
        staging
    }

    /// The image in the staging buffer's `bytes`, its row padding stripped.
    fn image(&self, bytes: &[u8]) -> RgbaImage {
        let mut pixels = Vec::with_capacity((self.row_bytes * u64::from(self.height)) as usize);
        for row in bytes.chunks_exact(self.padded_row as usize) {
            pixels.extend_from_slice(&row[..self.row_bytes as usize]);
        }
        RgbaImage { width: self.width, height: self.height, pixels }
    }
}

/// Maps `staging` after the submitted work and copies it out.
fn read_back(ctx: &GpuContext, staging: &wgpu::Buffer) -> Result<Vec<u8>, RenderError> {
    let slice = staging.slice(..);
    let (tx, rx) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        // The receiver outlives the wait below; a send error is moot.
        let _ = tx.send(r);
    });
    ctx.wait_idle()?;
    // Another thread polling the same device may deliver the callback a
    // moment after our wait.
    match rx.recv_timeout(MAP_CALLBACK_TIMEOUT) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(GpuError::Map { message: e.to_string() }.into()),
        Err(e) => {
            return Err(GpuError::Map { message: format!("the map callback did not run after waiting: {e}") }.into());
        }
    }
    let bytes = {
        let view = slice.get_mapped_range().map_err(|e| GpuError::Map { message: e.to_string() })?;
        view.to_vec()
    };
    staging.unmap();
    Ok(bytes)
}

fn check_options(opts: &RenderOptions, max_dimension: u32) -> Result<(), RenderError> {
    let (w, h) = (opts.width, opts.height);
    if w == 0 || h == 0 || w > max_dimension || h > max_dimension {
        return Err(RenderError::ImageSize { width: w, height: h, max: max_dimension });
    }
    fn invalid(option: &'static str, value: impl std::fmt::Display, expected: &'static str) -> RenderError {
        RenderError::InvalidOption { option, value: value.to_string(), expected }
    }
    if !opts.azimuth_deg.is_finite() {
        return Err(invalid("azimuth_deg", opts.azimuth_deg, "a finite angle in degrees"));
    }
    if !(-89.0..=89.0).contains(&opts.elevation_deg) {
        return Err(invalid("elevation_deg", opts.elevation_deg, "an angle in [-89, 89] degrees"));
    }
    if !(1.0..=120.0).contains(&opts.fov_y_deg) {
        return Err(invalid("fov_y_deg", opts.fov_y_deg, "an angle in [1, 120] degrees"));
    }
    if !(opts.margin >= 0.0 && opts.margin <= 100.0) {
        return Err(invalid("margin", opts.margin, "a fraction in [0, 100]"));
    }
    for (option, value) in [("ambient", opts.ambient), ("key_light", opts.key_light), ("headlight", opts.headlight)] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(invalid(option, value, "a finite intensity ≥ 0"));
        }
    }
    for (option, value) in [("cage_width", opts.cage_width), ("crease_width", opts.crease_width)] {
        if !(value.is_finite() && value > 0.0 && value <= 1024.0) {
            return Err(invalid(option, value, "a width in pixels in (0, 1024]"));
        }
    }
    match opts.overlay_depth {
        OverlayDepth::Tested { bias } if !(bias.is_finite() && (0.0..=1.0).contains(&bias)) => {
            return Err(invalid("overlay_depth bias", bias, "a fraction of the bounding radius in [0, 1]"));
        }
        _ => {}
    }
    if let Some(c) = opts.checker
        && !(c.is_finite() && c > 0.0 && c <= 1e6)
    {
        return Err(invalid("checker", c, "squares per unit of texture space in (0, 1e6]"));
    }
    if opts.max_buffer_bytes == Some(0) {
        return Err(invalid("max_buffer_bytes", 0, "a positive byte count"));
    }
    Ok(())
}
