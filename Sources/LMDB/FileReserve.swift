internal import CLMDB
import EventGraphLocking

#if canImport(Glibc)
  import Glibc
#endif

/// Written zeros kept ahead of the pages an environment uses (``EnvironmentOptions/fileReserve``).
///
/// LMDB grows its data file by writing pages past its end. A durable commit that does
/// so must then flush the file's new size too, which on a journaling file system (ext4
/// here) is a journal commit on top of the data: measured, it made a durable transaction
/// of 64 small inserts about a fifth slower (Docs/benchmarks.md). With zeros already
/// written past the pages in use, the commits write into space the file has, and their
/// flush carries data alone. The zeros must be real writes: a hole, or a range reserved by
/// `fallocate`, would need the same journaling when first written.
///
/// Why this never touches data: it runs only in a write transaction that has just begun,
/// so LMDB's writer lock, which is held across processes, keeps every other writer out;
/// it writes only at or past the end of the file, where no page of a committed
/// transaction lies (LMDB writes a page before any meta page names it); and the pages of
/// the transaction under way are written at its commit, after the zeros. The file is
/// bigger than the pages in use by less than one and a half reserves; nothing reads that
/// space, a copy (`mdb_env_copy2`) leaves it out, and a crash that loses some of the zeros
/// loses nothing else. It is best effort: when a write fails (a full disk), the file stays as LMDB
/// would have it, and LMDB reports the full disk itself if its own writes fail.
final class FileReserve: Sendable {
  /// Bytes of zeros to keep ahead; a new stretch is written when less than half is left.
  let size: Int
  let pageSize: Int
  /// The end of the file as last seen: never less than it was, since LMDB only grows it.
  private let knownEnd = Locked(0)

  private static let zeros = [UInt8](repeating: 0, count: 64 << 10)

  init(size: Int, pageSize: Int) {
    self.size = size
    self.pageSize = pageSize
  }

  /// Extends the reserve if less than half of it is left past the pages in use; call in a
  /// write transaction just begun, before it writes.
  func keep(_ env: OpaquePointer) {
    var info = MDB_envinfo()
    var fd: Int32 = -1
    guard mdb_env_info(env, &info) == 0, mdb_env_get_fd(env, &fd) == 0, fd >= 0 else { return }
    let used = (Int(info.me_last_pgno) + 1) * pageSize
    let limit = info.me_mapsize
    knownEnd.withLock { end in
      if used + size / 2 <= end { return }
      var st = stat()
      guard fstat(fd, &st) == 0 else { return }
      end = max(end, Int(st.st_size))
      guard used + size / 2 > end, end + size <= limit else { return }
      end += Self.writeZeros(fd: fd, at: end, count: size)
    }
  }

  /// Writes `count` zero bytes at `offset`; returns how many were written before a failure.
  private static func writeZeros(fd: Int32, at offset: Int, count: Int) -> Int {
    var done = 0
    while done < count {
      let n = min(zeros.count, count - done)
      // SAFETY: `zeros` is an immutable array that outlives the call; `n` is at most its count.
      let r = zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, n, off_t(offset + done)) }
      if r < 0 && errno == EINTR { continue }
      guard r > 0 else { break }
      done += r
    }
    return done
  }
}
