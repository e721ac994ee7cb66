/* passthrough.c: the FUSE server's life, its session (INIT, DESTROY, reset) and the dispatch of requests. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "devices/fs/fs_ops.h"
#include "devices/virtio/xfer.h"

/* A plain read-only handle ends: its fd may wait on its inode for the next OPEN (fs_file.c). */
static bool fs_park_on_inode(void *ctx, int fd, const struct fsi_park *p)
{
	struct fs_server *s = ctx;

	return fsi_park(&s->inodes, fd, p);
}

/* The fd budget is spent: a parked fd makes room for what the guest asks (fsh_add). */
static bool fs_evict_parked(void *ctx)
{
	struct fs_server *s = ctx;

	return fsi_evict_parked(&s->inodes);
}

int fs_server_create(struct fs_server *s, const char *host_dir, bool readonly, enum fs_cache cache,
		     size_t max_fds)
{
	struct statfs sf;
	struct stat st;
	int root_fd, err;

	memset(s, 0, sizeof(*s));
	s->readonly = readonly;
	s->cache = cache;
	s->as_root = geteuid() == 0;
	s->ctx.minor = FUSE_KERNEL_MINOR_VERSION;
	root_fd = open(host_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return -errno;
	if (fstat(root_fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(root_fd);
		return -ENOTDIR;
	}
	if (fstatfs(root_fd, &sf) < 0 || fs_pseudo_magic(sf.f_type)) {
		close(root_fd);
		return -EACCES;
	}
	s->root_dev = st.st_dev;
	s->root_local = xfer_local_magic(sf.f_type);
	s->devs[0] = st.st_dev;
	s->nr_devs = 1;
	s->proc_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->proc_fd < 0) {
		err = -errno;
		close(root_fd);
		return err;
	}
	if (max_fds < 64)
		max_fds = 64;
	err = fsi_init(&s->inodes, root_fd, max_fds / 2);
	if (err) {
		close(root_fd);
		goto fail_proc;
	}
	err = fsh_init(&s->handles, (uint32_t)(max_fds / 2 > UINT32_MAX ? UINT32_MAX : max_fds / 2));
	if (err)
		goto fail_inodes;
	s->handles.park = fs_park_on_inode;
	s->handles.evict = fs_evict_parked;
	s->handles.park_ctx = s;
	err = -pthread_mutex_init(&s->init_lock, NULL);
	if (err)
		goto fail_handles;
	err = -pthread_mutex_init(&s->dev_lock, NULL);
	if (err) {
		pthread_mutex_destroy(&s->init_lock);
		goto fail_handles;
	}
	return 0;
fail_handles:
	fsh_destroy(&s->handles);
fail_inodes:
	fsi_destroy(&s->inodes);
fail_proc:
	close(s->proc_fd);
	return err;
}

void fs_server_destroy(struct fs_server *s)
{
	fsh_destroy(&s->handles);
	fsi_destroy(&s->inodes);
	close(s->proc_fd);
	pthread_mutex_destroy(&s->init_lock);
	pthread_mutex_destroy(&s->dev_lock);
}

void fs_server_reset(struct fs_server *s)
{
	pthread_mutex_lock(&s->init_lock);
	__atomic_store_n(&s->initialized, 0, __ATOMIC_RELEASE);
	s->flags = 0;
	__atomic_store_n(&s->ctx.setxattr_ext, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->ctx.minor, FUSE_KERNEL_MINOR_VERSION, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->init_lock);
	fsh_release_all(&s->handles);
	fsi_forget_all(&s->inodes);
}

void fs_server_decode_ctx(struct fs_server *s, struct fuse_decode_ctx *ctx)
{
	ctx->minor = __atomic_load_n(&s->ctx.minor, __ATOMIC_ACQUIRE);
	ctx->setxattr_ext = __atomic_load_n(&s->ctx.setxattr_ext, __ATOMIC_RELAXED);
}

size_t fs_reply_error(void *out, uint64_t unique, int err)
{
	struct fuse_out_header h = { .len = sizeof(h), .error = err, .unique = unique };

	memcpy(out, &h, sizeof(h));
	return sizeof(h);
}

/* Does the share's file system keep POSIX ACLs? (ENODATA: yes, the root just has none.) */
static bool fs_share_has_acls(struct fs_server *s)
{
	struct fs_fdpath p;

	fs_fdpath(&p, s->inodes.root->fd);
	return getxattr(p.s, "system.posix_acl_access", NULL, 0) >= 0 || errno == ENODATA;
}

/* INIT (fuse.h "INIT request and reply"): agree the version and the flags Linux's virtiofs uses. */
static int fs_op_init(struct fs_server *s, const struct fuse_req *r, struct fs_out *o)
{
	const struct fuse_init_in *in = &r->in.init;
	struct fuse_init_out out = { 0 };
	uint64_t offered, want;
	size_t size = sizeof(out);

	if (in->major < 7)
		return -EPROTO;
	out.major = FUSE_KERNEL_VERSION;
	out.minor = FUSE_KERNEL_MINOR_VERSION;
	if (in->major > 7)
		/* The kernel retries with our major after this short reply. */
		return fs_out_put(o, &out, FUSE_COMPAT_INIT_OUT_SIZE);
	if (in->minor < out.minor)
		out.minor = in->minor;
	offered = in->flags;
	if (in->flags & FUSE_INIT_EXT)
		offered |= (uint64_t)in->flags2 << 32;
	want = FUSE_ASYNC_READ | FUSE_ATOMIC_O_TRUNC | FUSE_BIG_WRITES | FUSE_DO_READDIRPLUS |
	       FUSE_READDIRPLUS_AUTO | FUSE_PARALLEL_DIROPS | FUSE_MAX_PAGES |
	       FUSE_HANDLE_KILLPRIV_V2 | FUSE_SETXATTR_EXT | FUSE_INIT_EXT | FUSE_ASYNC_DIO;
	/* No FUSE_POSIX_LOCKS/FUSE_FLOCK_LOCKS: the guest kernel keeps locks itself (see GETLK). */
	/* POSIX ACLs where the host keeps them: the guest kernel then checks them (it already
	   checks mode bits, default_permissions) and leaves the umask to us (DONT_MASK), since a
	   parent's default ACL replaces it. */
	if (fs_share_has_acls(s))
		want |= FUSE_POSIX_ACL | FUSE_DONT_MASK;
	if (s->cache == FS_CACHE_AUTO)
		want |= FUSE_AUTO_INVAL_DATA;
	if (s->cache == FS_CACHE_ALWAYS)
		want |= FUSE_CACHE_SYMLINKS;
	want &= offered;
	out.flags = (uint32_t)want;
	out.flags2 = (uint32_t)(want >> 32);
	out.max_readahead = in->max_readahead;
	out.max_write = FS_MAX_IO;
	out.max_pages = FS_MAX_IO / 4096;
	out.max_background = 64;
	out.congestion_threshold = 48;
	out.time_gran = 1;
	if (out.minor < 5)
		size = FUSE_COMPAT_INIT_OUT_SIZE;
	else if (out.minor < 23)
		size = FUSE_COMPAT_22_INIT_OUT_SIZE;

	/* A second INIT starts a new session: the guest's driver started over while the device stayed
	   up (a guest reboot a vhost-user front-end does not report as a reset). Nothing of the old
	   session - nodeids, open handles - may outlive it. */
	if (__atomic_load_n(&s->initialized, __ATOMIC_ACQUIRE))
		fs_server_reset(s);
	pthread_mutex_lock(&s->init_lock);
	s->flags = want;
	__atomic_store_n(&s->ctx.setxattr_ext, (want & FUSE_SETXATTR_EXT) ? 1 : 0, __ATOMIC_RELAXED);
	/* Release: a thread that sees initialized also sees flags and the decoding context. */
	__atomic_store_n(&s->ctx.minor, out.minor, __ATOMIC_RELEASE);
	__atomic_store_n(&s->initialized, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->init_lock);
	return fs_out_put(o, &out, size);
}

static int fs_op_lookup(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
			struct fs_out *o)
{
	struct fuse_entry_out eo;
	int err;

	if (dir->type != S_IFDIR)
		return -ENOTDIR;
	err = fs_lookup_entry(s, dir->fd, r->name, &eo, NULL);
	if (err)
		return err;
	err = fs_out_put(o, &eo, sizeof(eo));
	if (err)
		fsi_forget(&s->inodes, eo.nodeid, 1); /* the guest will never know it */
	return err;
}

static void fs_op_batch_forget(struct fs_server *s, const struct fuse_req *r)
{
	const unsigned char *p = r->data;
	size_t i;

	for (i = 0; i < r->in.batch_forget.count; i++) {
		struct fuse_forget_one one;

		memcpy(&one, p + i * sizeof(one), sizeof(one)); /* unaligned inside the request */
		fsi_forget(&s->inodes, one.nodeid, one.nlookup);
	}
}

/* The guest's sync(2): flush the host file system holding the share (inline: no io_uring opcode). */
static int fs_op_syncfs(struct fs_server *s)
{
	int fd, err = fs_creds_enter(s, 0, 0); /* our own act, whoever asked: no fsuid leftovers */

	if (err)
		return err;
	fd = fs_reopen(s, s->inodes.root, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	if (syncfs(fd) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* Opcodes whose request names an inode (hdr.nodeid) we must resolve first. */
static bool fs_needs_inode(uint32_t op)
{
	switch (op) {
	case FUSE_INIT:
	case FUSE_DESTROY:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH:
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
	case FUSE_READ:
	case FUSE_WRITE:
	case FUSE_READDIR:
	case FUSE_READDIRPLUS:
	case FUSE_LSEEK:
	case FUSE_FALLOCATE:
	case FUSE_COPY_FILE_RANGE:
	case FUSE_GETLK:
	case FUSE_SETLK:
	case FUSE_SETLKW:
	case FUSE_SYNCFS:
		return false;
	default:
		return true;
	}
}

/*
 * Opcodes that act on the host with the caller's identity. Not those that only drop or flush what
 * the caller already opened: the kernel sends RELEASE and friends without credentials (uid may be
 * the overflow id), and they must not fail.
 */
static bool fs_needs_creds(uint32_t op)
{
	switch (op) {
	case FUSE_INIT:
	case FUSE_DESTROY:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH:
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
	case FUSE_SYNCFS:
	case FUSE_LSEEK:
		return false;
	default:
		return true;
	}
}

static int fs_op_inode(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
		       struct fs_out *o)
{
	switch (r->hdr.opcode) {
	case FUSE_LOOKUP:
		return fs_op_lookup(s, r, ino, o);
	case FUSE_GETATTR:
		return fs_op_getattr(s, ino, o);
	case FUSE_SETATTR:
		return fs_op_setattr(s, r, ino, o);
	case FUSE_READLINK:
		return fs_op_readlink(ino, o);
	case FUSE_STATFS:
		return fs_op_statfs(ino, o);
	case FUSE_ACCESS:
		return fs_op_access(s, r, ino);
	case FUSE_SYMLINK:
		return fs_op_symlink(s, r, ino, o);
	case FUSE_MKNOD:
		return fs_op_mknod(s, r, ino, o);
	case FUSE_MKDIR:
		return fs_op_mkdir(s, r, ino, o);
	case FUSE_UNLINK:
		return fs_op_unlink(s, r, ino, o);
	case FUSE_RMDIR:
		return fs_op_rmdir(s, r, ino, o);
	case FUSE_RENAME:
	case FUSE_RENAME2:
		return fs_op_rename(s, r, ino, o);
	case FUSE_LINK:
		return fs_op_link(s, r, ino, o);
	case FUSE_OPEN:
		return fs_op_open(s, r, ino, o);
	case FUSE_CREATE:
		return fs_op_create(s, r, ino, o);
	case FUSE_TMPFILE:
		return fs_op_tmpfile(s, r, ino, o);
	case FUSE_OPENDIR:
		return fs_op_opendir(s, r, ino, o);
	case FUSE_GETXATTR:
		return fs_op_getxattr(s, r, ino, o);
	case FUSE_LISTXATTR:
		return fs_op_listxattr(s, r, ino, o);
	case FUSE_SETXATTR:
		return fs_op_setxattr(s, r, ino, o);
	case FUSE_REMOVEXATTR:
		return fs_op_removexattr(s, r, ino, o);
	default:
		return -ENOSYS;
	}
}

static int fs_op_handle(struct fs_server *s, const struct fuse_req *r, const void *reqbuf,
			size_t have, struct fs_out *o)
{
	switch (r->hdr.opcode) {
	case FUSE_INIT:
		return fs_op_init(s, r, o);
	case FUSE_DESTROY:
		fs_server_reset(s);
		return 0;
	case FUSE_SYNCFS:
		return fs_op_syncfs(s);
	case FUSE_RELEASE:
		return fs_op_release(s, r, o);
	case FUSE_RELEASEDIR:
		return fs_op_releasedir(s, r, o);
	case FUSE_FLUSH:
		return fs_op_flush(s, r, o);
	case FUSE_FSYNC:
		return fs_op_fsync(s, r, o);
	case FUSE_FSYNCDIR:
		return fs_op_fsyncdir(s, r, o);
	case FUSE_READ:
		return fs_op_read(s, r, o);
	case FUSE_WRITE:
		return fs_op_write(s, r, reqbuf, have, o);
	case FUSE_READDIR:
		return fs_op_readdir(s, r, false, o);
	case FUSE_READDIRPLUS:
		return fs_op_readdir(s, r, true, o);
	case FUSE_LSEEK:
		return fs_op_lseek(s, r, o);
	case FUSE_FALLOCATE:
		return fs_op_fallocate(s, r, o);
	case FUSE_COPY_FILE_RANGE:
		return fs_op_copy_file_range(s, r, o);
	case FUSE_GETLK:
	case FUSE_SETLK:
	case FUSE_SETLKW:
		/* Documented ENOSYS: we never offer FUSE_POSIX_LOCKS, so Linux keeps POSIX locks in
		   the guest kernel and never sends these. */
		return -ENOSYS;
	default:
		return -ENOSYS;
	}
}

size_t fs_dispatch(struct fs_server *s, const struct fuse_req *r, const void *reqbuf, size_t have,
		   void *out, size_t cap)
{
	struct fs_out o = { .buf = out, .cap = cap, .len = sizeof(struct fuse_out_header) };
	struct fuse_out_header h;
	struct fsi_inode *ino = NULL;
	uint32_t op = r->hdr.opcode;
	int err;

	switch (op) {
	case FUSE_FORGET:
		fsi_forget(&s->inodes, r->hdr.nodeid, r->in.forget.nlookup);
		return 0;
	case FUSE_BATCH_FORGET:
		fs_op_batch_forget(s, r);
		return 0;
	case FUSE_INTERRUPT:
		return 0; /* requests are not interruptible here; the original one will complete */
	default:
		break;
	}
	if (cap < sizeof(h))
		return 0;
	err = fs_thread_prepare(s);
	if (!err && op != FUSE_INIT && !__atomic_load_n(&s->initialized, __ATOMIC_ACQUIRE))
		err = -EIO;
	if (!err && fs_needs_creds(op))
		err = fs_creds_enter(s, r->hdr.uid, r->hdr.gid);
	if (!err && fs_needs_inode(op)) {
		ino = fsi_get(&s->inodes, r->hdr.nodeid);
		if (!ino)
			err = -ESTALE;
	}
	if (!err)
		err = ino ? fs_op_inode(s, r, ino, &o) : fs_op_handle(s, r, reqbuf, have, &o);
	fsi_put(&s->inodes, ino);
	if (err)
		return fs_reply_error(out, r->hdr.unique, err);
	h.len = (uint32_t)o.len;
	h.error = 0;
	h.unique = r->hdr.unique;
	memcpy(out, &h, sizeof(h));
	return o.len;
}
