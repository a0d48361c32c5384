#if canImport(Glibc)
  import Glibc
#endif

/// The system calls of the key file and the slot file, with `EINTR` retried and short
/// reads and writes continued; each returns `errno` on failure so that callers can say
/// what failed in their own error.
enum FileIO {
  /// `open(2)`, retried on `EINTR`: the descriptor, or `errno`.
  static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) -> Result<Int32, Errno> {
    while true {
      let fd = Glibc.open(path, flags, mode)
      if fd >= 0 { return .success(fd) }
      if errno != EINTR { return .failure(Errno(errno)) }
    }
  }

  /// Writes all of `bytes` at `offset` (`pwrite(2)`, continued after a short write).
  static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> Errno? {
    var done = 0
    while done < bytes.count {
      // SAFETY: `done < bytes.count`, so the pointer and length stay inside `bytes`.
      let n = pwrite(fd, bytes.baseAddress.map { $0 + done }, bytes.count - done, off_t(offset + done))
      if n < 0 {
        if errno == EINTR { continue }
        return Errno(errno)
      }
      if n == 0 { return Errno(EIO) }
      done += n
    }
    return nil
  }

  /// Reads up to `buffer.count` bytes at `offset` (`pread(2)`, continued until the end of
  /// the file): how many were read, fewer only at the end of the file.
  static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Result<Int, Errno> {
    var done = 0
    while done < buffer.count {
      // SAFETY: `done < buffer.count`, so the pointer and length stay inside `buffer`.
      let n = pread(fd, buffer.baseAddress.map { $0 + done }, buffer.count - done, off_t(offset + done))
      if n < 0 {
        if errno == EINTR { continue }
        return .failure(Errno(errno))
      }
      if n == 0 { break }
      done += n
    }
    return .success(done)
  }

  /// `fstat(2)` of an open descriptor.
  static func status(_ fd: Int32) -> Result<stat, Errno> {
    var info = stat()
    guard fstat(fd, &info) == 0 else { return .failure(Errno(errno)) }
    return .success(info)
  }

  /// `fsync(2)` of the directory holding `path`, so that a file just created there is
  /// still named after a crash.
  static func syncDirectory(of path: String) -> Errno? {
    let directory = path.contains("/") ? String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]) : "."
    switch open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) {
    case .failure(let error): return error
    case .success(let fd):
      defer { close(fd) }
      return fsync(fd) == 0 ? nil : Errno(errno)
    }
  }

  /// Permission bits as `chmod` writes them: `0640`.
  static func octal(_ mode: mode_t) -> String {
    let digits = String(mode & 0o7777, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }
}

/// An `errno` value with the system's message for it.
struct Errno: Error, CustomStringConvertible {
  let code: Int32
  init(_ code: Int32) { self.code = code }
  var description: String { String(cString: strerror(code)) }
}
