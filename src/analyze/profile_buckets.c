/*
 * profile_buckets.c — bucket rules: the built-ins, the rule-file parser,
 * the stack classifier and wall-mode wait classes (see profile_buckets.h).
 */
#include "analyze/profile_buckets.h"

#include "base/scan.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the built-ins ---- */

static const struct {
	const char *name;
	bool runtime;
} builtin_buckets[VT_BK__COUNT] = {
	[VT_BK_NETWORK] = { "network send/recv", false },
	[VT_BK_FILESYSTEM] = { "filesystem syscalls", false },
	[VT_BK_MEMORY] = { "memory allocation", false },
	[VT_BK_LOCKS] = { "locks/futex", false },
	[VT_BK_POLL] = { "poll/sleep", false },
	[VT_BK_COMPRESSION] = { "compression", false },
	[VT_BK_CRYPTO] = { "crypto", false },
	[VT_BK_SERIALIZATION] = { "JSON/serialization", false },
	[VT_BK_HASHING] = { "hashing", false },
	[VT_BK_JIT] = { "JIT code", true },
	[VT_BK_PYTHON] = { "Python interpreter", true },
	[VT_BK_JVM] = { "JVM", true },
	[VT_BK_KERNEL_OTHER] = { "kernel other", false },
	[VT_BK_OTHER] = { "other", false },
};

/*
 * The built-in rules, in the order they are tried on a frame.  Kernel rules
 * first: a kernel function name says for certain what a system call did
 * (a write to a socket reaches tcp_sendmsg, to a file ext4_file_write_iter),
 * where the libc wrapper (write) cannot.  libc's read and write are in no
 * bucket for that reason.  The data-work buckets (compression, crypto,
 * JSON, hashing) match user-space frames only, so the kernel's own
 * full_name_hash or crc32c in a file system are not "hashing".
 */
struct builtin_rule {
	uint8_t bucket;
	uint8_t select;
	const char *glob;
};

#define K(b, g) { VT_BK_##b, VT_SEL_KERNEL, g }
#define U(b, g) { VT_BK_##b, VT_SEL_USER, g }
#define F(b, g) { VT_BK_##b, VT_SEL_FUNC, g }
#define L(b, g) { VT_BK_##b, VT_SEL_LIB, g }

static const struct builtin_rule builtin_rules[] = {
	/* network: the kernel's socket layers */
	K(NETWORK, "tcp_*"), K(NETWORK, "__tcp_*"), K(NETWORK, "udp_*"), K(NETWORK, "__udp_*"),
	K(NETWORK, "udpv6_*"), K(NETWORK, "inet_*"), K(NETWORK, "__inet_*"), K(NETWORK, "inet6_*"),
	K(NETWORK, "sock_*"), K(NETWORK, "__sock_*"), K(NETWORK, "sk_*"), K(NETWORK, "__sk_*"),
	K(NETWORK, "skb_*"), K(NETWORK, "__skb_*"), K(NETWORK, "unix_stream_*"),
	K(NETWORK, "unix_dgram_*"), K(NETWORK, "ip_*"), K(NETWORK, "__ip_*"), K(NETWORK, "ip6_*"),
	K(NETWORK, "ipv6_*"), K(NETWORK, "__dev_queue_xmit"), K(NETWORK, "dev_hard_start_xmit"),
	K(NETWORK, "loopback_xmit"), K(NETWORK, "netif_*"), K(NETWORK, "__netif_*"),
	K(NETWORK, "net_rx_action"), K(NETWORK, "__napi_poll"), K(NETWORK, "process_backlog"),
	K(NETWORK, "nf_*"), K(NETWORK, "__sys_send*"), K(NETWORK, "__sys_recv*"),
	K(NETWORK, "___sys_sendmsg"), K(NETWORK, "___sys_recvmsg"), K(NETWORK, "____sys_sendmsg"),
	K(NETWORK, "____sys_recvmsg"), K(NETWORK, "__sys_accept*"), K(NETWORK, "__sys_connect*"),
	K(NETWORK, "__x64_sys_send*"), K(NETWORK, "__x64_sys_recv*"),
	K(NETWORK, "__x64_sys_accept*"), K(NETWORK, "__x64_sys_connect"),
	K(NETWORK, "__x64_sys_socket*"), K(NETWORK, "__x64_sys_shutdown"),
	/* filesystem: VFS, the file systems, the page cache */
	/* not vfs_read/vfs_write: sockets and pipes pass there too; a file's read or write
	 * reaches its file system or the page cache nearer the leaf */
	K(FILESYSTEM, "vfs_open"), K(FILESYSTEM, "vfs_statx*"), K(FILESYSTEM, "vfs_fstat*"),
	K(FILESYSTEM, "vfs_getattr*"), K(FILESYSTEM, "vfs_fsync*"), K(FILESYSTEM, "vfs_unlink"),
	K(FILESYSTEM, "vfs_rename"), K(FILESYSTEM, "vfs_mkdir"), K(FILESYSTEM, "vfs_rmdir"),
	K(FILESYSTEM, "vfs_readlink"), K(FILESYSTEM, "vfs_fallocate"), K(FILESYSTEM, "vfs_create"),
	K(FILESYSTEM, "ext4_*"), K(FILESYSTEM, "__ext4_*"),
	K(FILESYSTEM, "xfs_*"), K(FILESYSTEM, "btrfs_*"), K(FILESYSTEM, "f2fs_*"),
	K(FILESYSTEM, "nfs_*"), K(FILESYSTEM, "fuse_*"), K(FILESYSTEM, "ovl_*"),
	K(FILESYSTEM, "jbd2_*"), K(FILESYSTEM, "do_sys_open*"), K(FILESYSTEM, "do_filp_open"),
	K(FILESYSTEM, "path_openat"), K(FILESYSTEM, "path_lookupat"), K(FILESYSTEM, "filename_lookup"),
	K(FILESYSTEM, "link_path_walk*"), K(FILESYSTEM, "walk_component"),
	K(FILESYSTEM, "lookup_fast"), K(FILESYSTEM, "__lookup_*"), K(FILESYSTEM, "__d_lookup*"),
	K(FILESYSTEM, "d_alloc_parallel"), K(FILESYSTEM, "do_statx"), K(FILESYSTEM, "do_faccessat"),
	K(FILESYSTEM, "iterate_dir"), K(FILESYSTEM, "__fput"), K(FILESYSTEM, "filp_close"),
	K(FILESYSTEM, "filemap_*"), K(FILESYSTEM, "generic_file_*"),
	K(FILESYSTEM, "generic_perform_write"), K(FILESYSTEM, "iomap_*"),
	K(FILESYSTEM, "page_cache_*"), K(FILESYSTEM, "ondemand_readahead"),
	K(FILESYSTEM, "touch_atime"), K(FILESYSTEM, "file_update_time"),
	K(FILESYSTEM, "fsnotify*"), K(FILESYSTEM, "__fsnotify*"),
	K(FILESYSTEM, "__x64_sys_open*"), K(FILESYSTEM, "__x64_sys_*stat*"),
	K(FILESYSTEM, "__do_sys_*stat*"), K(FILESYSTEM, "__x64_sys_getdents*"),
	K(FILESYSTEM, "__x64_sys_close*"), K(FILESYSTEM, "__x64_sys_fsync"),
	K(FILESYSTEM, "__x64_sys_fdatasync"), K(FILESYSTEM, "__x64_sys_pread64"),
	K(FILESYSTEM, "__x64_sys_pwrite64"), K(FILESYSTEM, "__x64_sys_lseek"),
	K(FILESYSTEM, "__x64_sys_unlink*"), K(FILESYSTEM, "__x64_sys_rename*"),
	K(FILESYSTEM, "__x64_sys_mkdir*"), K(FILESYSTEM, "__x64_sys_rmdir"),
	K(FILESYSTEM, "__x64_sys_readlink*"), K(FILESYSTEM, "__x64_sys_access"),
	K(FILESYSTEM, "__x64_sys_faccessat*"), K(FILESYSTEM, "__x64_sys_ftruncate"),
	K(FILESYSTEM, "__x64_sys_fallocate"),
	/* memory: the kernel's side of mmap, brk and first touch */
	K(MEMORY, "do_anonymous_page"), K(MEMORY, "do_mmap"), K(MEMORY, "vm_mmap_pgoff"),
	K(MEMORY, "__do_munmap"), K(MEMORY, "do_vmi_munmap"), K(MEMORY, "do_brk_flags"),
	K(MEMORY, "__x64_sys_mmap"), K(MEMORY, "__x64_sys_munmap"), K(MEMORY, "__x64_sys_brk"),
	K(MEMORY, "__x64_sys_mremap"), K(MEMORY, "__x64_sys_madvise"),
	/* locks: the kernel's futex (also in user-space names: *futex*) */
	F(LOCKS, "*futex*"),
	/* poll/sleep: the kernel's waits */
	K(POLL, "do_epoll_wait"), K(POLL, "ep_*"), K(POLL, "__x64_sys_epoll_*"),
	K(POLL, "do_sys_poll"), K(POLL, "__x64_sys_poll"), K(POLL, "__x64_sys_ppoll"),
	K(POLL, "do_select"), K(POLL, "core_sys_select"), K(POLL, "__x64_sys_select"),
	K(POLL, "__x64_sys_pselect6"), K(POLL, "poll_schedule_timeout"),
	K(POLL, "hrtimer_nanosleep"), K(POLL, "do_nanosleep"), K(POLL, "common_nsleep"),
	K(POLL, "__x64_sys_nanosleep"), K(POLL, "__x64_sys_clock_nanosleep"),
	K(POLL, "do_sched_yield"), K(POLL, "__x64_sys_sched_yield"),

	/* user space: libc's network calls */
	U(NETWORK, "send"), U(NETWORK, "recv"), U(NETWORK, "sendto"), U(NETWORK, "recvfrom"),
	U(NETWORK, "sendmsg"), U(NETWORK, "recvmsg"), U(NETWORK, "sendmmsg"),
	U(NETWORK, "recvmmsg"), U(NETWORK, "__send"), U(NETWORK, "__recv"),
	U(NETWORK, "__libc_send*"), U(NETWORK, "__libc_recv*"), U(NETWORK, "accept"),
	U(NETWORK, "accept4"), U(NETWORK, "__libc_accept"), U(NETWORK, "connect"),
	U(NETWORK, "__connect"), U(NETWORK, "__libc_connect"), U(NETWORK, "socket"),
	U(NETWORK, "getaddrinfo"),
	/* Rust's sockets, demangled: std::net, std's unix net (recv_with_flags), tokio::net,
	 * mio::net (before poll/sleep's mio::*) */
	U(NETWORK, "std::net::*"), U(NETWORK, "<std::net::*"), U(NETWORK, "std::sys::*net::*"),
	U(NETWORK, "<std::sys::*net::*"),
	U(NETWORK, "tokio::net::*"), U(NETWORK, "mio::net::*"), U(NETWORK, "async_std::net::*"),
	/* libc's file calls (read and write could be sockets or pipes: not here) */
	U(FILESYSTEM, "open"), U(FILESYSTEM, "open64"), U(FILESYSTEM, "openat"),
	U(FILESYSTEM, "openat64"), U(FILESYSTEM, "__open*"), U(FILESYSTEM, "__libc_open*"),
	U(FILESYSTEM, "stat"), U(FILESYSTEM, "stat64"), U(FILESYSTEM, "lstat*"),
	U(FILESYSTEM, "fstat*"), U(FILESYSTEM, "__xstat*"), U(FILESYSTEM, "__lxstat*"),
	U(FILESYSTEM, "__fxstat*"), U(FILESYSTEM, "statx"), U(FILESYSTEM, "pread"),
	U(FILESYSTEM, "pread64"), U(FILESYSTEM, "__pread64"), U(FILESYSTEM, "__libc_pread*"),
	U(FILESYSTEM, "pwrite"), U(FILESYSTEM, "pwrite64"), U(FILESYSTEM, "__pwrite64"),
	U(FILESYSTEM, "__libc_pwrite*"), U(FILESYSTEM, "fsync"), U(FILESYSTEM, "fdatasync"),
	U(FILESYSTEM, "close"), U(FILESYSTEM, "__close"), U(FILESYSTEM, "__libc_close"),
	U(FILESYSTEM, "opendir"), U(FILESYSTEM, "readdir"), U(FILESYSTEM, "readdir64"),
	U(FILESYSTEM, "closedir"), U(FILESYSTEM, "__getdents*"), U(FILESYSTEM, "getdents64"),
	U(FILESYSTEM, "unlink"), U(FILESYSTEM, "unlinkat"), U(FILESYSTEM, "rename"), U(FILESYSTEM, "renameat*"), U(FILESYSTEM, "mkdir"), U(FILESYSTEM, "mkdirat"),
	U(FILESYSTEM, "rmdir"), U(FILESYSTEM, "access"), U(FILESYSTEM, "faccessat"),
	U(FILESYSTEM, "readlink"), U(FILESYSTEM, "readlinkat"), U(FILESYSTEM, "realpath"), U(FILESYSTEM, "lseek*"),
	U(FILESYSTEM, "__lseek*"), U(FILESYSTEM, "ftruncate*"), U(FILESYSTEM, "fallocate*"),
	U(FILESYSTEM, "fopen*"), U(FILESYSTEM, "fclose"),
	/* Rust's and C++'s file APIs, demangled: std::fs, std::sys::pal::unix::fs, tokio::fs,
	 * async_std::fs; std::filesystem (the code between them and libc) */
	U(FILESYSTEM, "std::fs::*"), U(FILESYSTEM, "*::fs::*"), U(FILESYSTEM, "std::filesystem::*"),
	U(FILESYSTEM, "std::__fs::filesystem::*"),
	/* allocators */
	U(MEMORY, "malloc"), U(MEMORY, "free"), U(MEMORY, "calloc"), U(MEMORY, "realloc"),
	U(MEMORY, "reallocarray"), U(MEMORY, "cfree"), U(MEMORY, "posix_memalign"),
	U(MEMORY, "aligned_alloc"), U(MEMORY, "memalign"), U(MEMORY, "valloc"),
	U(MEMORY, "pvalloc"), U(MEMORY, "malloc_usable_size"), U(MEMORY, "__libc_malloc"),
	U(MEMORY, "__libc_free"), U(MEMORY, "__libc_calloc"), U(MEMORY, "__libc_realloc"),
	U(MEMORY, "__libc_memalign"), U(MEMORY, "__malloc_*"), U(MEMORY, "_int_malloc"),
	U(MEMORY, "_int_free*"), U(MEMORY, "unlink_chunk*"), U(MEMORY, "_int_realloc"),
	U(MEMORY, "_int_memalign"),
	U(MEMORY, "malloc_consolidate"), U(MEMORY, "sysmalloc"), U(MEMORY, "systrim"),
	U(MEMORY, "tcache_*"), U(MEMORY, "arena_get2*"), U(MEMORY, "je_*"), U(MEMORY, "tc_*"),
	U(MEMORY, "mi_malloc*"), U(MEMORY, "mi_free*"), U(MEMORY, "_Znw*"), U(MEMORY, "_Zna*"),
	U(MEMORY, "_Zdl*"), U(MEMORY, "_Zda*"), U(MEMORY, "operator new*"),
	U(MEMORY, "operator delete*"), U(MEMORY, "__rust_alloc*"), U(MEMORY, "__rust_dealloc"),
	U(MEMORY, "__rust_realloc"), U(MEMORY, "__rdl_*"), U(MEMORY, "__rg_*"),
	U(MEMORY, "runtime.mallocgc*"), U(MEMORY, "mmap"), U(MEMORY, "mmap64"),
	/* CPython's allocator (obmalloc), inside libpython: allocation, not the interpreter */
	U(MEMORY, "pymalloc_*"), U(MEMORY, "_PyObject_Malloc"), U(MEMORY, "_PyObject_Calloc"),
	U(MEMORY, "_PyObject_Realloc"), U(MEMORY, "_PyObject_Free"), U(MEMORY, "PyObject_Malloc"),
	U(MEMORY, "PyObject_Calloc"), U(MEMORY, "PyObject_Realloc"), U(MEMORY, "PyObject_Free"),
	U(MEMORY, "PyMem_*"), U(MEMORY, "_PyMem_Raw*"),
	U(MEMORY, "__mmap*"), U(MEMORY, "munmap"), U(MEMORY, "__munmap"), U(MEMORY, "mremap"),
	U(MEMORY, "__mremap"), U(MEMORY, "brk"), U(MEMORY, "__brk"), U(MEMORY, "sbrk"),
	U(MEMORY, "__sbrk"), U(MEMORY, "madvise"), U(MEMORY, "__madvise"),
	L(MEMORY, "libjemalloc.so*"), L(MEMORY, "libtcmalloc*.so*"), L(MEMORY, "libmimalloc.so*"),
	/* allocators compiled into a program: Rust's alloc::alloc, tikv-jemallocator's
	 * prefixed jemalloc (_rjem_), mimalloc's internals; not alloc::* (BTreeMap is
	 * alloc::collections: data-structure work) */
	U(MEMORY, "alloc::alloc::*"), U(MEMORY, "_rjem_*"), U(MEMORY, "*jemallocator::*"),
	U(MEMORY, "*jemalloc_sys::*"), U(MEMORY, "mimalloc::*"), U(MEMORY, "_mi_*"),
	U(MEMORY, "mi_heap_malloc*"), U(MEMORY, "mi_realloc*"), U(MEMORY, "mi_calloc*"),
	/* locks and condition variables */
	U(LOCKS, "pthread_mutex_*"), U(LOCKS, "__pthread_mutex_*"), U(LOCKS, "pthread_rwlock_*"),
	U(LOCKS, "__pthread_rwlock_*"), U(LOCKS, "pthread_cond_*"), U(LOCKS, "__pthread_cond_*"),
	U(LOCKS, "pthread_spin_*"), U(LOCKS, "__lll_*"), U(LOCKS, "sem_wait*"),
	U(LOCKS, "sem_timedwait*"), U(LOCKS, "sem_post*"), U(LOCKS, "__new_sem_*"),
	U(LOCKS, "*parking_lot*"), U(LOCKS, "std::sync::*mutex*"), U(LOCKS, "std::sync::*Mutex*"),
	U(LOCKS, "std::sync::*rwlock*"), U(LOCKS, "std::sync::*RwLock*"),
	U(LOCKS, "std::sys::*futex*"), U(LOCKS, "std::mutex::*"), U(LOCKS, "std::__1::mutex::*"),
	/* the user-space side of waits */
	U(POLL, "epoll_wait"), U(POLL, "epoll_pwait*"), U(POLL, "poll"), U(POLL, "__poll"),
	U(POLL, "ppoll"), U(POLL, "__ppoll*"), U(POLL, "select"), U(POLL, "__select"),
	U(POLL, "pselect*"), U(POLL, "nanosleep"), U(POLL, "__nanosleep"),
	U(POLL, "clock_nanosleep*"), U(POLL, "__clock_nanosleep*"), U(POLL, "usleep"),
	U(POLL, "sleep"), U(POLL, "sched_yield"), U(POLL, "__sched_yield"),
	/* async runtimes parking their workers and waiting on epoll: tokio, mio, async-std,
	 * smol's polling; std's own thread::park and sleep */
	U(POLL, "mio::*"), U(POLL, "tokio::runtime::*park*"), U(POLL, "tokio::runtime::*Park*"),
	U(POLL, "tokio::runtime::io::driver::*"), U(POLL, "tokio::runtime::time::*"),
	U(POLL, "async_io::reactor::*"), U(POLL, "polling::*"), U(POLL, "std::thread::park*"),
	U(POLL, "std::thread::sleep*"), U(POLL, "std::thread::Thread::park*"),
	/* compression */
	L(COMPRESSION, "libz.so*"), L(COMPRESSION, "libzstd.so*"), L(COMPRESSION, "liblz4.so*"),
	L(COMPRESSION, "libbz2.so*"), L(COMPRESSION, "liblzma.so*"), L(COMPRESSION, "libbrotli*.so*"),
	L(COMPRESSION, "libsnappy.so*"), U(COMPRESSION, "deflate*"), U(COMPRESSION, "inflate*"),
	U(COMPRESSION, "ZSTD_*"), U(COMPRESSION, "HUF_*"), U(COMPRESSION, "FSE_*"),
	U(COMPRESSION, "LZ4_*"), U(COMPRESSION, "LZ4F_*"), U(COMPRESSION, "BZ2_*"),
	U(COMPRESSION, "lzma_*"), U(COMPRESSION, "Brotli*"), U(COMPRESSION, "*snappy*"),
	U(COMPRESSION, "compress2"), U(COMPRESSION, "uncompress*"),
	/* Rust crates (demangled): zstd, flate2 over miniz_oxide or zlib, lz4, snap, brotli */
	U(COMPRESSION, "zstd::*"), U(COMPRESSION, "zstd_safe::*"), U(COMPRESSION, "flate2::*"),
	U(COMPRESSION, "miniz_oxide::*"), U(COMPRESSION, "lz4::*"), U(COMPRESSION, "lz4_flex::*"),
	U(COMPRESSION, "snap::*"), U(COMPRESSION, "brotli::*"), U(COMPRESSION, "brotli_decompressor::*"),
	/* crypto */
	L(CRYPTO, "libcrypto.so*"), L(CRYPTO, "libssl.so*"), L(CRYPTO, "libgnutls.so*"),
	L(CRYPTO, "libnettle.so*"), L(CRYPTO, "libhogweed.so*"), L(CRYPTO, "libgcrypt.so*"),
	L(CRYPTO, "libsodium.so*"), L(CRYPTO, "libmbedcrypto.so*"), L(CRYPTO, "libwolfssl.so*"),
	U(CRYPTO, "EVP_*"), U(CRYPTO, "AES_*"), U(CRYPTO, "aes_*"), U(CRYPTO, "aesni_*"),
	U(CRYPTO, "*_aes_*"), U(CRYPTO, "SHA*_*"), U(CRYPTO, "sha1_*"), U(CRYPTO, "sha256*"),
	U(CRYPTO, "sha512*"), U(CRYPTO, "*_sha256_*"), U(CRYPTO, "*_sha512_*"),
	U(CRYPTO, "ChaCha20*"), U(CRYPTO, "*chacha20*"), U(CRYPTO, "*poly1305*"),
	U(CRYPTO, "Poly1305*"), U(CRYPTO, "gcm_*"), U(CRYPTO, "*_gcm_*"), U(CRYPTO, "CRYPTO_*"),
	U(CRYPTO, "RSA_*"), U(CRYPTO, "ECDSA_*"), U(CRYPTO, "X25519*"), U(CRYPTO, "*x25519*"),
	U(CRYPTO, "*ed25519*"), U(CRYPTO, "*curve25519*"), U(CRYPTO, "SSL_*"),
	U(CRYPTO, "ring_core_*"), U(CRYPTO, "*rustls*"),
	/* Rust crates (demangled) and aws-lc's prefixed symbols */
	U(CRYPTO, "ring::*"), U(CRYPTO, "openssl::*"), U(CRYPTO, "aws_lc_*"), U(CRYPTO, "*aws_lc_rs::*"),
	U(CRYPTO, "sha2::*"), U(CRYPTO, "sha1::*"), U(CRYPTO, "aes::*"), U(CRYPTO, "aes_gcm::*"),
	U(CRYPTO, "chacha20*"), U(CRYPTO, "ed25519*"), U(CRYPTO, "x25519*"), U(CRYPTO, "p256::*"),
	/* JSON and other serialization (not "*erializ*": materialize is no serializer) */
	L(SERIALIZATION, "libjansson.so*"), L(SERIALIZATION, "libjson*.so*"),
	L(SERIALIZATION, "libprotobuf*.so*"), L(SERIALIZATION, "libyaml*.so*"),
	L(SERIALIZATION, "libsimdjson.so*"), L(SERIALIZATION, "libcjson.so*"),
	L(SERIALIZATION, "libexpat.so*"), L(SERIALIZATION, "libxml2.so*"),
	/* Python's codecs in C: _json, _pickle, pyexpat, _elementtree; orjson, ujson, _yaml, msgpack */
	L(SERIALIZATION, "_json.*.so"), L(SERIALIZATION, "_pickle.*.so"), L(SERIALIZATION, "pyexpat.*.so"),
	L(SERIALIZATION, "_elementtree.*.so"), L(SERIALIZATION, "orjson*.so"), L(SERIALIZATION, "ujson*.so"),
	L(SERIALIZATION, "_yaml*.so"), L(SERIALIZATION, "_cmsgpack*.so"),
	U(SERIALIZATION, "*json*"), U(SERIALIZATION, "*Json*"), U(SERIALIZATION, "*JSON*"),
	U(SERIALIZATION, "*protobuf*"), U(SERIALIZATION, "*yaml*"), U(SERIALIZATION, "*Yaml*"),
	U(SERIALIZATION, "*YAML*"), U(SERIALIZATION, "*msgpack*"), U(SERIALIZATION, "*serializ*"),
	U(SERIALIZATION, "*Serializ*"), U(SERIALIZATION, "*serde*"), U(SERIALIZATION, "*cbor*"),
	U(SERIALIZATION, "*bson*"), U(SERIALIZATION, "XML_*"), U(SERIALIZATION, "xml*"),
	U(SERIALIZATION, "*toml*"),
	/* hashing (after crypto: libcrypto's digests are crypto) */
	U(HASHING, "*hash*"), U(HASHING, "*fnv*"), U(HASHING, "*FNV*"), U(HASHING, "xxh*"),
	U(HASHING, "XXH*"), U(HASHING, "*murmur*"), U(HASHING, "*Murmur*"), U(HASHING, "*crc32*"),
	U(HASHING, "*blake2*"), U(HASHING, "*blake3*"), U(HASHING, "*siphash*"),
	U(HASHING, "*SipHash*"), U(HASHING, "*Hasher*"), U(HASHING, "ahash::*"),
	U(HASHING, "foldhash::*"), U(HASHING, "*fxhash*"), U(HASHING, "rustc_hash::*"),
	/* runtimes, last: a frame nothing else claims is the runtime's own code */
	{ VT_BK_JIT, VT_SEL_ANON, "" },
	L(PYTHON, "libpython*.so*"), L(PYTHON, "python"), L(PYTHON, "python2*"),
	L(PYTHON, "python3*"), L(JVM, "libjvm.so"),
};

#undef K
#undef U
#undef F
#undef L

/* ---- checking a name and a glob ---- */

/* Bytes of the UTF-8 sequence at s[0..len), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, past U+10FFFF */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

enum text_fault { TEXT_OK, TEXT_CONTROL, TEXT_UTF8 };

/* Is s[0..len) printable UTF-8?  Control characters (C0, DEL, C1) and escapes are not. */
static enum text_fault text_check(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		if (u[i] < 0x20 || u[i] == 0x7f)
			return TEXT_CONTROL;
		n = utf8_len(u + i, len - i);
		if (!n)
			return TEXT_UTF8;
		if (n == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)
			return TEXT_CONTROL;   /* C1: some terminals obey U+009B as ESC [ */
		i += n;
	}
	return TEXT_OK;
}

/* What is wrong with glob g[0..len) as an fnmatch pattern, NULL when nothing. */
static const char *glob_fault(const char *g, size_t len)
{
	size_t i = 0;

	while (i < len) {
		if (g[i] == '\\') {
			if (i + 1 == len)
				return "the glob ends in a lone '\\'";
			i += 2;
		} else if (g[i] == '[') {
			size_t j = i + 1;
			if (j < len && (g[j] == '!' || g[j] == '^'))
				j++;
			if (j < len && g[j] == ']')
				j++;   /* a ']' first in the set is a member */
			while (j < len && g[j] != ']')
				j++;
			if (j >= len)
				return "'[' without a closing ']' in the glob";
			i = j + 1;
		} else {
			i++;
		}
	}
	return NULL;
}

/* ---- building the rules ---- */

static const char *const selector_names[] = {
	[VT_SEL_FUNC] = "func", [VT_SEL_USER] = "user", [VT_SEL_KERNEL] = "kernel",
	[VT_SEL_LIB] = "lib", [VT_SEL_ANON] = "anon",
};

/* Room for more rules; rules are few, so grow by doubling. */
static int add_rule(struct vt_bucket_rules *r, uint32_t *cap, uint32_t bucket, uint8_t select,
		    uint32_t line, const char *glob, size_t glob_len, struct vt_err *err)
{
	if (r->nrules == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 64;
		struct vt_bucket_rule *n = realloc(r->rules, ncap * sizeof(*n));
		if (!n)
			return vt_err_set(err, VT_E_NOMEM, 0, "bucket rules");
		r->rules = n;
		*cap = ncap;
	}
	char *g = strndup(glob, glob_len);
	if (!g)
		return vt_err_set(err, VT_E_NOMEM, 0, "bucket rules");
	r->rules[r->nrules++] = (struct vt_bucket_rule){
		.bucket = bucket, .select = select, .line = line, .glob = g,
	};
	return VT_OK;
}

/* The index of the bucket called name[0..len), added when new; UINT32_MAX when full. */
static uint32_t bucket_index(struct vt_bucket_rules *r, const char *name, size_t len)
{
	for (uint32_t i = 0; i < r->nbuckets; i++)
		if (strlen(r->buckets[i].name) == len && memcmp(r->buckets[i].name, name, len) == 0)
			return i;
	if (r->nbuckets >= VT_BUCKET_MAX_BUCKETS)
		return UINT32_MAX;
	struct vt_bucket *b = &r->buckets[r->nbuckets];
	memset(b, 0, sizeof(*b));
	memcpy(b->name, name, len);
	return r->nbuckets++;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static void trim(const char **s, size_t *len)
{
	while (*len && is_blank(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_blank((*s)[*len - 1]))
		(*len)--;
}

/* One line of a rule file; lineno for messages. */
static int parse_line(struct vt_bucket_rules *r, uint32_t *cap, uint32_t lineno, const char *line,
		      size_t len, struct vt_err *err)
{
	const char *name, *rest, *colon, *hash;
	size_t name_len, rest_len;
	uint8_t select = VT_SEL_FUNC;
	bool has_sel = false;

	if (memchr(line, '\0', len))
		return vt_err_set(err, VT_E_USAGE, 0, "line %u: a NUL byte", lineno);
	if (len && line[len - 1] == '\r')
		len--;
	trim(&line, &len);
	if (!len || line[0] == '#')
		return VT_OK;
	/* a comment: '#' after a blank */
	for (hash = line + 1; (hash = memchr(hash, '#', (size_t)(line + len - hash))); hash++)
		if (is_blank(hash[-1])) {
			len = (size_t)(hash - line);
			trim(&line, &len);
			break;
		}
	colon = memchr(line, ':', len);
	if (!colon)
		return vt_err_set(err, VT_E_USAGE, 0,
				  "line %u: no ':' between a bucket name and a glob (write 'bucket: glob')",
				  lineno);
	name = line;
	name_len = (size_t)(colon - line);
	trim(&name, &name_len);
	rest = colon + 1;
	rest_len = (size_t)(line + len - rest);
	trim(&rest, &rest_len);
	if (!name_len)
		return vt_err_set(err, VT_E_USAGE, 0, "line %u: empty bucket name before ':'", lineno);
	if (name_len > VT_BUCKET_NAME_MAX)
		return vt_err_set(err, VT_E_USAGE, 0, "line %u: bucket name longer than %d bytes",
				  lineno, VT_BUCKET_NAME_MAX);
	switch (text_check(name, name_len)) {
	case TEXT_CONTROL:
		return vt_err_set(err, VT_E_USAGE, 0,
				  "line %u: control character in the bucket name", lineno);
	case TEXT_UTF8:
		return vt_err_set(err, VT_E_USAGE, 0, "line %u: bucket name is not valid UTF-8",
				  lineno);
	case TEXT_OK:
		break;
	}
	/* The bucket name is printable from here on: messages may quote it. */
	char shown[VT_BUCKET_NAME_MAX + 1];
	memcpy(shown, name, name_len);
	shown[name_len] = '\0';
	for (uint8_t s = 0; s < sizeof(selector_names) / sizeof(selector_names[0]); s++) {
		size_t n = strlen(selector_names[s]);
		if (rest_len > n && memcmp(rest, selector_names[s], n) == 0 && rest[n] == ':') {
			select = s;
			has_sel = true;
			rest += n + 1;
			rest_len -= n + 1;
			trim(&rest, &rest_len);
			break;
		}
		if (rest_len == n && memcmp(rest, selector_names[s], n) == 0 && s == VT_SEL_ANON)
			return vt_err_set(err, VT_E_USAGE, 0,
					  "line %u: write 'anon:' for frames in anonymous code", lineno);
	}
	if (select == VT_SEL_ANON) {
		if (rest_len)
			return vt_err_set(err, VT_E_USAGE, 0, "line %u: 'anon:' takes no glob", lineno);
	} else if (!rest_len) {
		return vt_err_set(err, VT_E_USAGE, 0, "line %u: empty glob after '%s:'", lineno,
				  has_sel ? selector_names[select] : shown);
	}
	if (rest_len > VT_BUCKET_GLOB_MAX)
		return vt_err_set(err, VT_E_USAGE, 0, "line %u: glob longer than %d bytes", lineno,
				  VT_BUCKET_GLOB_MAX);
	if (text_check(rest, rest_len) == TEXT_CONTROL)
		return vt_err_set(err, VT_E_USAGE, 0, "line %u: control character in the glob", lineno);
	const char *fault = glob_fault(rest, rest_len);
	if (fault)
		return vt_err_set(err, VT_E_USAGE, 0, "line %u: %s", lineno, fault);
	if (r->nuser >= VT_BUCKET_MAX_RULES)
		return vt_err_set(err, VT_E_USAGE, 0, "line %u: more than %d rules", lineno,
				  VT_BUCKET_MAX_RULES);
	uint32_t b = bucket_index(r, name, name_len);
	if (b == UINT32_MAX)
		return vt_err_set(err, VT_E_USAGE, 0, "line %u: more than %d buckets", lineno,
				  VT_BUCKET_MAX_BUCKETS);
	int rc = add_rule(r, cap, b, select, lineno, rest, rest_len, err);
	if (rc == VT_OK)
		r->nuser++;
	return rc;
}

int vt_bucket_rules_parse(const char *text, size_t len, struct vt_bucket_rules **out,
			  struct vt_err *err)
{
	struct vt_bucket_rules *r = calloc(1, sizeof(*r));
	uint32_t cap = 0, lineno = 0;
	int rc = VT_OK;

	*out = NULL;
	if (r)
		r->buckets = calloc(VT_BUCKET_MAX_BUCKETS, sizeof(*r->buckets));
	if (!r || !r->buckets) {
		vt_bucket_rules_free(&r);
		return vt_err_set(err, VT_E_NOMEM, 0, "bucket rules");
	}
	for (uint32_t i = 0; i < VT_BK__COUNT; i++) {
		snprintf(r->buckets[i].name, sizeof(r->buckets[i].name), "%s", builtin_buckets[i].name);
		r->buckets[i].builtin = true;
		r->buckets[i].runtime = builtin_buckets[i].runtime;
	}
	r->nbuckets = VT_BK__COUNT;

	if (text && len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {   /* a byte-order mark */
		text += 3;
		len -= 3;
	}
	struct vt_scan sc = vt_scan_init(text ? text : "", text ? len : 0);
	const char *line;
	size_t line_len;
	while (rc == VT_OK && vt_scan_line(&sc, &line, &line_len))
		rc = parse_line(r, &cap, ++lineno, line, line_len, err);
	for (size_t i = 0; rc == VT_OK && i < sizeof(builtin_rules) / sizeof(builtin_rules[0]); i++)
		rc = add_rule(r, &cap, builtin_rules[i].bucket, builtin_rules[i].select, 0,
			      builtin_rules[i].glob, strlen(builtin_rules[i].glob), err);
	if (rc != VT_OK) {
		vt_bucket_rules_free(&r);
		return rc;
	}
	*out = r;
	return VT_OK;
}

int vt_bucket_rules_builtin(struct vt_bucket_rules **out, struct vt_err *err)
{
	return vt_bucket_rules_parse(NULL, 0, out, err);
}

int vt_bucket_rules_load(const char *path, struct vt_bucket_rules **out, struct vt_err *err)
{
	char shown[256];
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, rc, e;

	*out = NULL;
	vt_snippet(shown, sizeof(shown), path, strlen(path));
	/*
	 * Never waits for a writer to open a FIFO (it read as empty then);
	 * a pipe that has one (--buckets <(...)) is read to its end.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (fd < 0) {
		e = errno;
		if (e == ENOENT || e == ENOTDIR)
			return vt_err_set(err, VT_E_USAGE, e, "bucket rules '%s': no such file", shown);
		if (e == EACCES || e == EPERM)
			return vt_err_set(err, VT_E_PERM, e, "bucket rules '%s': permission denied",
					  shown);
		return vt_err_set(err, VT_E_IO, e, "bucket rules '%s': cannot open: %s", shown,
				  strerror(e));
	}
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		return vt_err_set(err, VT_E_IO, e, "bucket rules '%s': %s", shown, strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return vt_err_set(err, VT_E_USAGE, EISDIR, "bucket rules '%s': is a directory", shown);
	}
	if (S_ISREG(st.st_mode) && st.st_size > VT_BUCKET_FILE_MAX) {
		close(fd);
		return vt_err_set(err, VT_E_USAGE, EFBIG,
				  "bucket rules '%s': %lld bytes, larger than the %d a rule file may be",
				  shown, (long long)st.st_size, VT_BUCKET_FILE_MAX);
	}
	/* read to the end (a pipe has no size), one byte past the cap to notice more */
	buf = malloc(VT_BUCKET_FILE_MAX + 1);
	if (!buf) {
		close(fd);
		return vt_err_set(err, VT_E_NOMEM, 0, "bucket rules '%s'", shown);
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, VT_BUCKET_FILE_MAX + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			free(buf);
			close(fd);
			return vt_err_set(err, VT_E_IO, e, "bucket rules '%s': %s", shown, strerror(e));
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > VT_BUCKET_FILE_MAX) {
			free(buf);
			close(fd);
			return vt_err_set(err, VT_E_USAGE, EFBIG,
					  "bucket rules '%s': larger than the %d bytes a rule file may be",
					  shown, VT_BUCKET_FILE_MAX);
		}
	}
	close(fd);
	rc = vt_bucket_rules_parse(buf, len, out, err);
	free(buf);
	if (rc != VT_OK && err) {
		char msg[VT_ERR_MSG_MAX];
		snprintf(msg, sizeof(msg), "%s", err->msg);
		vt_err_set(err, rc, 0, "bucket rules '%s': %s", shown, msg);
		if (rc == VT_E_USAGE)
			vt_err_hint(err, "a rule is 'bucket: glob', 'bucket: lib:glob', 'bucket: "
				    "kernel:glob' or 'bucket: anon:'; see docs/profile-buckets.md");
	}
	return rc;
}

void vt_bucket_rules_free(struct vt_bucket_rules **rp)
{
	struct vt_bucket_rules *r = rp ? *rp : NULL;

	if (!r)
		return;
	for (uint32_t i = 0; i < r->nrules; i++)
		free(r->rules[i].glob);
	free(r->rules);
	free(r->buckets);
	free(r);
	*rp = NULL;
}

const char *vt_bucket_rule_text(const struct vt_bucket_rules *r, uint32_t i, char *buf, size_t cap)
{
	if (i >= r->nrules)
		snprintf(buf, cap, "?");
	else
		snprintf(buf, cap, "%s:%s", selector_names[r->rules[i].select], r->rules[i].glob);
	return buf;
}

/* ---- classifying ---- */

#define MEMO_UNKNOWN UINT32_MAX
#define MEMO_NONE (UINT32_MAX - 1)

struct vt_bucket_classifier {
	const struct vt_bucket_rules *rules;
	const struct vt_profile *p;
	uint32_t *memo;           /* [func * 2 + kernel]: the rule claiming it, MEMO_NONE, MEMO_UNKNOWN */
	uint32_t nmemo;
	uint32_t nfuncs;          /* p->nfuncs when made: a function added since is not memoized */
};

int vt_bucket_classifier_new(const struct vt_bucket_rules *r, const struct vt_profile *p,
			     struct vt_bucket_classifier **out, struct vt_err *err)
{
	struct vt_bucket_classifier *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return vt_err_set(err, VT_E_NOMEM, 0, "bucket classifier");
	c->rules = r;
	c->p = p;
	c->nfuncs = p->nfuncs;
	c->nmemo = (p->nfuncs + 1) * 2;   /* + 1: a loc whose func is out of range */
	c->memo = malloc(c->nmemo * sizeof(*c->memo));
	if (!c->memo) {
		free(c);
		return vt_err_set(err, VT_E_NOMEM, 0, "bucket classifier");
	}
	for (uint32_t i = 0; i < c->nmemo; i++)
		c->memo[i] = MEMO_UNKNOWN;
	*out = c;
	return VT_OK;
}

void vt_bucket_classifier_free(struct vt_bucket_classifier **cp)
{
	struct vt_bucket_classifier *c = cp ? *cp : NULL;

	if (!c)
		return;
	free(c->memo);
	free(c);
	*cp = NULL;
}

/* Executable memory of no file, where JIT code lives: "[anon]" as the unwinder
 * names it, or a name a runtime gave its mapping.  A frame in nothing mapped
 * at all (module "") is not JIT code: a return address read wrong, or code
 * mapped since the module list was last read. */
static bool anonymous_module(const char *m)
{
	return strncmp(m, "[anon", 5) == 0 || strncmp(m, "//anon", 6) == 0 ||
	       strcmp(m, "[heap]") == 0 || strncmp(m, "memfd:", 6) == 0;
}

static bool rule_claims(const struct vt_bucket_rule *rule, const char *name, const char *module,
			bool kernel)
{
	switch (rule->select) {
	/* a frame no symbol covers has the name "": only a glob like "*" claims it */
	case VT_SEL_FUNC:
		return fnmatch(rule->glob, name, 0) == 0;
	case VT_SEL_USER:
		return !kernel && fnmatch(rule->glob, name, 0) == 0;
	case VT_SEL_KERNEL:
		return kernel && fnmatch(rule->glob, name, 0) == 0;
	case VT_SEL_LIB:
		return !kernel && *module && fnmatch(rule->glob, module, 0) == 0;
	case VT_SEL_ANON:
		return !kernel && anonymous_module(module);
	}
	return false;
}

/* The rule that claims location loc, MEMO_NONE when none does. */
static uint32_t loc_rule(struct vt_bucket_classifier *c, uint32_t loc, bool *kernel)
{
	const struct vt_profile *p = c->p;
	if (loc >= p->nlocs) {
		*kernel = false;
		return MEMO_NONE;
	}
	const struct vt_prof_loc *l = &p->locs[loc];
	uint32_t f = l->func < p->nfuncs ? l->func : p->nfuncs;
	bool memo = f < c->nfuncs || f == p->nfuncs;   /* a function added since: no slot */
	uint32_t slot = (f < c->nfuncs ? f : c->nfuncs) * 2 + (l->kernel ? 1 : 0);

	*kernel = l->kernel;
	if (memo && c->memo[slot] != MEMO_UNKNOWN)
		return c->memo[slot];
	const char *name = f < p->nfuncs ? vt_profile_str(p, p->funcs[f].name) : "";
	const char *module = f < p->nfuncs ? vt_profile_str(p, p->funcs[f].module) : "";
	/* a PLT stub ("free@plt") is matched as the function it jumps to */
	char stub[256];
	size_t nlen = strlen(name);
	if (nlen > 4 && nlen - 4 < sizeof(stub) && strcmp(name + nlen - 4, "@plt") == 0) {
		memcpy(stub, name, nlen - 4);
		stub[nlen - 4] = '\0';
		name = stub;
	}
	uint32_t found = MEMO_NONE;
	for (uint32_t i = 0; i < c->rules->nrules; i++)
		if (rule_claims(&c->rules->rules[i], name, module, l->kernel)) {
			found = i;
			break;
		}
	if (memo)
		c->memo[slot] = found;
	return found;
}

uint32_t vt_bucket_classify(struct vt_bucket_classifier *c, const struct vt_prof_stack *s,
			    uint32_t *frame, uint32_t *rule)
{
	const uint32_t *locs = vt_profile_stack_locs(c->p, s);
	bool kernel, in_kernel = false;

	if (frame)
		*frame = UINT32_MAX;
	if (rule)
		*rule = UINT32_MAX;
	for (uint32_t i = 0; i < s->depth; i++) {
		uint32_t r = loc_rule(c, locs[i], &kernel);
		if (i == 0)
			in_kernel = kernel;
		if (r != MEMO_NONE) {
			if (frame)
				*frame = i;
			if (rule)
				*rule = r;
			return c->rules->rules[r].bucket;
		}
		/* the first user address above an unclaimed kernel part had its chance: the
		 * functions inlined there (each a frame), and the one they were inlined into */
		if (in_kernel && !kernel) {
			const struct vt_prof_loc *l = locs[i] < c->p->nlocs ? &c->p->locs[locs[i]] : NULL;
			if (!l || !l->inlined_into || i + 1 >= s->depth || l->inlined_into != locs[i + 1] + 1)
				return VT_BK_KERNEL_OTHER;
		}
	}
	return in_kernel ? VT_BK_KERNEL_OTHER : VT_BK_OTHER;
}

/* ---- wall mode: what a waiting thread waits on ---- */

const char *vt_wait_class_name(enum vt_wait_class c)
{
	static const char *const names[VT_WAITC__COUNT] = {
		[VT_WAITC_FUTEX] = "futex", [VT_WAITC_LOCK] = "lock", [VT_WAITC_EPOLL] = "epoll",
		[VT_WAITC_POLL] = "poll/select", [VT_WAITC_SLEEP] = "sleep", [VT_WAITC_IO] = "read/recv",
		[VT_WAITC_DISK] = "disk", [VT_WAITC_OTHER] = "other",
	};
	return (unsigned)c < VT_WAITC__COUNT ? names[c] : "?";
}

bool vt_wait_class_idle(enum vt_wait_class c)
{
	return c == VT_WAITC_FUTEX || c == VT_WAITC_EPOLL || c == VT_WAITC_POLL ||
	       c == VT_WAITC_SLEEP;
}

/* Globs over a wait string (wchan or system call) or a frame's name, tried in order. */
static const struct {
	uint8_t cls;
	const char *glob;
} wait_globs[] = {
	{ VT_WAITC_LOCK, "pthread_mutex_*lock*" }, { VT_WAITC_LOCK, "__pthread_mutex_*lock*" },
	{ VT_WAITC_LOCK, "__lll_lock_wait*" }, { VT_WAITC_LOCK, "pthread_rwlock_*lock" },
	{ VT_WAITC_LOCK, "__pthread_rwlock_*lock*" }, { VT_WAITC_LOCK, "*lock_contended*" },
	{ VT_WAITC_LOCK, "*lock_slow*" },
	{ VT_WAITC_EPOLL, "*epoll*" }, { VT_WAITC_EPOLL, "ep_poll" },
	{ VT_WAITC_POLL, "*poll*" }, { VT_WAITC_POLL, "*select*" },
	{ VT_WAITC_SLEEP, "*nanosleep*" }, { VT_WAITC_SLEEP, "*nsleep*" }, { VT_WAITC_SLEEP, "pause" },
	{ VT_WAITC_SLEEP, "*sigtimedwait*" }, { VT_WAITC_SLEEP, "*sigsuspend*" },
	{ VT_WAITC_SLEEP, "sleep" }, { VT_WAITC_SLEEP, "usleep" },
	{ VT_WAITC_FUTEX, "*futex*" }, { VT_WAITC_FUTEX, "pthread_cond_*" },
	{ VT_WAITC_FUTEX, "__pthread_cond_*" }, { VT_WAITC_FUTEX, "sem_*wait*" },
	{ VT_WAITC_IO, "read" }, { VT_WAITC_IO, "readv" }, { VT_WAITC_IO, "pread64" },
	{ VT_WAITC_IO, "write" }, { VT_WAITC_IO, "writev" }, { VT_WAITC_IO, "recv*" },
	{ VT_WAITC_IO, "send*" }, { VT_WAITC_IO, "accept*" }, { VT_WAITC_IO, "connect" },
	{ VT_WAITC_IO, "__libc_read" }, { VT_WAITC_IO, "__libc_write" },
	{ VT_WAITC_IO, "__libc_recv*" }, { VT_WAITC_IO, "__libc_send*" },
	{ VT_WAITC_IO, "__libc_accept" }, { VT_WAITC_IO, "*sk_wait_data*" },
	{ VT_WAITC_IO, "*wait_woken*" }, { VT_WAITC_IO, "pipe_read" }, { VT_WAITC_IO, "pipe_write" },
	{ VT_WAITC_IO, "*csk_accept*" }, { VT_WAITC_IO, "unix_stream_*" },
	{ VT_WAITC_IO, "sk_stream_wait_*" }, { VT_WAITC_IO, "n_tty_read" },
	{ VT_WAITC_IO, "wait_for_partner" },
};

static bool wait_of(const char *name, enum vt_wait_class *cls)
{
	if (!*name)
		return false;
	for (size_t i = 0; i < sizeof(wait_globs) / sizeof(wait_globs[0]); i++)
		if (fnmatch(wait_globs[i].glob, name, 0) == 0) {
			*cls = wait_globs[i].cls;
			return true;
		}
	return false;
}

/* Frames looked at, from the leaf, to find what a wait is. */
#define WAIT_FRAMES 24

enum vt_wait_class vt_bucket_wait_class(const struct vt_profile *p, const struct vt_prof_stack *s)
{
	const uint32_t *locs = vt_profile_stack_locs(p, s);
	enum vt_wait_class cls, from_frames = VT_WAITC__COUNT;

	if (s->state == VT_PROF_DISK)
		return VT_WAITC_DISK;
	/* The frames first: a futex wait under pthread_mutex_lock is a lock, not a park.
	 * The frame nearest the leaf that names a wait decides, but a lock above a
	 * futex frame overrides it (the futex is how the lock waits). */
	for (uint32_t i = 0; i < s->depth && i < WAIT_FRAMES; i++) {
		if (locs[i] >= p->nlocs || p->locs[locs[i]].func >= p->nfuncs)
			continue;
		const char *name = vt_profile_str(p, p->funcs[p->locs[locs[i]].func].name);
		if (!wait_of(name, &cls))
			continue;
		if (from_frames == VT_WAITC__COUNT)
			from_frames = cls;
		else if (cls == VT_WAITC_LOCK && from_frames == VT_WAITC_FUTEX)
			from_frames = VT_WAITC_LOCK;
		if (from_frames != VT_WAITC_FUTEX)
			break;
	}
	if (from_frames != VT_WAITC__COUNT)
		return from_frames;
	if (wait_of(vt_profile_str(p, s->wait), &cls))
		return cls;
	return VT_WAITC_OTHER;
}
