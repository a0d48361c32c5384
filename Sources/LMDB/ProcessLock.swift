import Foundation

/// An exclusive lock on one byte of an existing file that belongs to the process holding
/// it: the kernel drops it when the process ends, however it ends (a SIGKILL included), so
/// a killed holder never blocks the next one.
///
/// It is an open-file-description lock (Linux's `F_OFD_SETLK`), so a second attempt in the
/// same process conflicts too, and closing another descriptor of the file does not drop
/// it (a POSIX lock would be dropped). Take it on a byte far past the data (LMDB takes no
/// lock on its data file), so that it neither changes the file nor meets another lock.
public final class ProcessLock {
  // Linux's open-file-description lock command (fcntl.h defines it only with _GNU_SOURCE).
  private static let setLock: Int32 = 37

  private let descriptor: Int32
  public let file: String

  /// Takes the lock on byte `byte` of `file`, without waiting.
  ///
  /// - Throws: ``ProcessLockHeld`` when another holder has it, ``LMDBError`` when the file
  ///   cannot be opened or locked.
  public init(file: String, byte: Int64) throws {
    self.file = file
    let fd = open(file, O_RDWR | O_CLOEXEC)
    guard fd >= 0 else { throw LMDBError(code: errno, operation: "open(\(file))") }
    var request = flock()
    request.l_type = Int16(F_WRLCK)
    request.l_whence = Int16(SEEK_SET)
    request.l_start = off_t(byte)
    request.l_len = 1
    // SAFETY: the pointer is to a local flock that outlives the call, which only reads it.
    if withUnsafeMutablePointer(to: &request, { fcntl(fd, Self.setLock, $0) }) != 0 {
      let reason = errno
      close(fd)
      guard reason == EAGAIN || reason == EACCES else {
        throw LMDBError(code: reason, operation: "fcntl(\(file), F_OFD_SETLK)")
      }
      throw ProcessLockHeld(file: file)
    }
    descriptor = fd
  }

  deinit { close(descriptor) }

  /// Whether some holder has the lock on byte `byte` of `file` now (this process's own
  /// included).
  public static func isHeld(_ file: String, byte: Int64) -> Bool {
    do {
      _ = try ProcessLock(file: file, byte: byte)
      return false
    } catch {
      return error is ProcessLockHeld
    }
  }
}

/// Another holder has a ``ProcessLock``.
public struct ProcessLockHeld: Error, Sendable, Hashable, CustomStringConvertible {
  public let file: String

  public var description: String { "\(file) is locked by another holder" }
}
