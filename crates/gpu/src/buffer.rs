//! Typed storage buffers.

use std::fmt;
use std::marker::PhantomData;

use crate::context::GpuContext;
use crate::error::{GpuError, Result};

/// Usages of every [`GpuBuffer`]: bound as storage, copied from and to.
const USAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_SRC).union(wgpu::BufferUsages::COPY_DST);

/// A storage buffer of `len` elements of `T` on one [`GpuContext`]'s device.
///
/// The wgpu buffer is at least 4 bytes and a multiple of 4 bytes long (wgpu's
/// copy alignment); [`len`](Self::len) is the logical length. Reads go
/// through a staging buffer ([`download`](Self::download)); per-frame
/// updates of the same size reuse the buffer ([`write`](Self::write)).
///
/// # Errors
/// Creating a buffer larger than the device's `max_buffer_size` is
/// [`GpuError::TooLarge`]; nothing is allocated.
///
/// # Panics
/// A buffer belongs to the context that created it: using it with another
/// [`GpuContext`] panics (wgpu cannot share resources across instances).
pub struct GpuBuffer<T> {
    buffer: wgpu::Buffer,
    context: u64,
    len: usize,
    _marker: PhantomData<T>,
}

impl<T> fmt::Debug for GpuBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuBuffer")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("size", &self.buffer.size())
            .finish()
    }
}

/// Bytes taken by `len` elements of `T`, or [`GpuError::TooLarge`].
pub(crate) fn byte_len<T>(what: &'static str, len: usize) -> Result<u64> {
    len.checked_mul(size_of::<T>()).and_then(|b| u64::try_from(b).ok()).ok_or(GpuError::TooLarge {
        what,
        bytes: u64::MAX,
        limit: "max_buffer_size",
        limit_value: 0,
    })
}

/// Pads `bytes` with zeros to a multiple of 4 (wgpu's copy alignment).
fn padded(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if bytes.len().is_multiple_of(4) {
        bytes.into()
    } else {
        let mut v = bytes.to_vec();
        v.resize(bytes.len().next_multiple_of(4), 0);
        v.into()
    }
}

impl<T: bytemuck::Pod> GpuBuffer<T> {
    /// A new buffer holding a copy of `data`.
    ///
    /// # Errors
    /// [`GpuError::TooLarge`] over `max_buffer_size`; wgpu errors (out of
    /// memory, device lost).
    pub fn upload(ctx: &GpuContext, data: &[T]) -> Result<Self> {
        let bytes = byte_len::<T>("uploaded buffer", data.len())?;
        ctx.scoped("buffer upload", || {
            let buffer = ctx.create_buffer("subla buffer", bytes, USAGE, true)?;
            {
                let mut view =
                    buffer.slice(..).get_mapped_range_mut().map_err(|e| GpuError::Map { message: e.to_string() })?;
                view.slice(..bytes as usize).copy_from_slice(bytemuck::cast_slice(data));
            }
            buffer.unmap();
            Ok(Self { buffer, context: ctx.id(), len: data.len(), _marker: PhantomData })
        })
    }

    /// A new buffer of `len` zeros.
    ///
    /// # Errors
    /// As [`GpuBuffer::upload`].
    pub fn zeroed(ctx: &GpuContext, len: usize) -> Result<Self> {
        let bytes = byte_len::<T>("zeroed buffer", len)?;
        ctx.scoped("buffer creation", || {
            let buffer = ctx.create_buffer("subla buffer", bytes, USAGE, false)?;
            Ok(Self { buffer, context: ctx.id(), len, _marker: PhantomData })
        })
    }

    /// Another handle to the same device memory (no copy): writes through
    /// one are seen through the other. For sharing a read-only array
    /// between structures (a level's topology and the eval data of a step).
    pub fn share(&self) -> Self {
        Self { buffer: self.buffer.clone(), context: self.context, len: self.len, _marker: PhantomData }
    }

    /// A new buffer with the same contents (a copy on the device).
    ///
    /// # Errors
    /// As [`GpuBuffer::upload`].
    #[track_caller]
    pub fn duplicate(&self, ctx: &GpuContext) -> Result<Self> {
        self.check_context(ctx);
        let copy = Self::zeroed(ctx, self.len)?;
        ctx.scoped("buffer copy", || {
            let mut encoder = ctx.encoder();
            encoder.copy_buffer_to_buffer(&self.buffer, 0, &copy.buffer, 0, self.buffer.size());
            ctx.submit(encoder);
            Ok(())
        })?;
        Ok(copy)
    }

    /// Overwrites the contents with `data` (same length), for reuse across
    /// frames without reallocating.
    ///
    /// # Panics
    /// If `data.len() != self.len()`.
    ///
    /// # Errors
    /// wgpu errors (device lost, validation).
    #[track_caller]
    pub fn write(&mut self, ctx: &GpuContext, data: &[T]) -> Result<()> {
        self.check_context(ctx);
        assert_eq!(
            data.len(),
            self.len,
            "GpuBuffer::write: data has {} elements but the buffer holds {} (write keeps the size)",
            data.len(),
            self.len
        );
        if data.is_empty() || size_of::<T>() == 0 {
            return ctx.check_alive();
        }
        ctx.scoped("buffer write", || {
            ctx.queue().write_buffer(&self.buffer, 0, &padded(bytemuck::cast_slice(data)));
            Ok(())
        })
    }

    /// Reads the contents back through a staging buffer (waits for the
    /// device).
    ///
    /// # Errors
    /// wgpu errors, [`GpuError::Map`] if the staging buffer cannot be mapped.
    #[track_caller]
    pub fn download(&self, ctx: &GpuContext) -> Result<Vec<T>> {
        let mut out = vec![T::zeroed(); self.len];
        self.download_into(ctx, &mut out)?;
        Ok(out)
    }

    /// Reads the contents back into `out` (waits for the device): what a
    /// frame loop calls with the same `out` every frame, so that nothing is
    /// allocated on the host. Large buffers come back in chunks through one
    /// staging buffer of at most 64 MiB.
    ///
    /// # Panics
    /// If `out.len()` differs from [`GpuBuffer::len`], or `ctx` did not
    /// create this buffer.
    ///
    /// # Errors
    /// As [`GpuBuffer::download`].
    #[track_caller]
    pub fn download_into(&self, ctx: &GpuContext, out: &mut [T]) -> Result<()> {
        self.check_context(ctx);
        assert_eq!(
            out.len(),
            self.len,
            "GpuBuffer::download_into: out has {} elements, the buffer {}",
            out.len(),
            self.len
        );
        byte_len::<T>("downloaded buffer", self.len)?;
        ctx.scoped("buffer download", || ctx.read_into(&self.buffer, bytemuck::cast_slice_mut(out)))
    }
}

impl<T> GpuBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements' size in bytes (`len * size_of::<T>()`).
    pub fn byte_len(&self) -> u64 {
        (self.len * size_of::<T>()) as u64
    }

    /// The underlying wgpu buffer (storage, copy source and destination).
    pub fn as_wgpu(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// Panics unless this buffer was created by `ctx` (wgpu cannot use
    /// resources across instances).
    #[track_caller]
    pub(crate) fn check_context(&self, ctx: &GpuContext) {
        assert_eq!(
            self.context,
            ctx.id(),
            "GpuBuffer of GpuContext #{} used with another GpuContext (#{}): buffers belong to the context that created them",
            self.context,
            ctx.id()
        );
    }

    /// Binding of the whole logical contents (at least 4 bytes), checked
    /// against the binding limit.
    #[track_caller]
    pub(crate) fn binding(&self, ctx: &GpuContext, what: &'static str) -> Result<wgpu::BindingResource<'_>> {
        self.check_context(ctx);
        let bytes = self.byte_len().max(4).next_multiple_of(4);
        ctx.check_binding(what, bytes)?;
        Ok(crate::context::range(&self.buffer, 0, bytes))
    }
}
