import Foundation

/// An exclusive lock on a file that belongs to the process holding it: the kernel drops it
/// when the process ends, however it ends (a SIGKILL included), so a killed holder never
/// blocks the next one.
///
/// It is an open-file-description lock (Linux's `F_OFD_SETLK`) on the whole file, so a
/// second attempt in the same process conflicts too. The holder writes its process ID
/// into the file, for the refusal to name it.
public final class ProcessLock {
  // Linux's open-file-description lock command (fcntl.h defines it only with _GNU_SOURCE).
  private static let setLock: Int32 = 37

  private let descriptor: Int32
  public let file: String

  /// Takes the lock on `file` (created when missing), without waiting.
  ///
  /// - Throws: ``ProcessLockHeld`` when another holder has it, ``LMDBError`` when the file
  ///   cannot be opened or locked.
  public convenience init(file: String) throws {
    try self.init(file: file, recording: true)
  }

  /// Takes the lock; writes this process's ID into the file when `recording` (a probe
  /// does not: it would overwrite the holder's).
  private init(file: String, recording: Bool) throws {
    self.file = file
    let fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw LMDBError(code: errno, operation: "open(\(file))") }
    var request = flock()
    request.l_type = Int16(F_WRLCK)
    request.l_whence = Int16(SEEK_SET)
    // SAFETY: the pointer is to a local flock that outlives the call, which only reads it.
    if withUnsafeMutablePointer(to: &request, { fcntl(fd, Self.setLock, $0) }) != 0 {
      let reason = errno
      close(fd)
      guard reason == EAGAIN || reason == EACCES else {
        throw LMDBError(code: reason, operation: "fcntl(\(file), F_OFD_SETLK)")
      }
      throw ProcessLockHeld(file: file, process: Self.recordedHolder(file))
    }
    descriptor = fd
    guard recording else { return }
    let pid = Array("\(getpid())\n".utf8)
    if ftruncate(fd, 0) == 0 {
      // SAFETY: the buffer is a local array that outlives the call, which only reads it.
      _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }
  }

  deinit { close(descriptor) }

  /// Whether some holder has the lock on `file` now (this process's own included).
  public static func isHeld(_ file: String) -> Bool {
    guard FileManager.default.fileExists(atPath: file) else { return false }
    do {
      _ = try ProcessLock(file: file, recording: false)
      return false
    } catch {
      return error is ProcessLockHeld
    }
  }

  /// The process ID the last holder wrote into `file`.
  private static func recordedHolder(_ file: String) -> Int32? {
    guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
    return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
  }
}

/// Another holder has a ``ProcessLock``.
public struct ProcessLockHeld: Error, Sendable, Hashable, CustomStringConvertible {
  public let file: String
  /// The process that wrote its ID into the file, when it did.
  public let process: Int32?

  public var description: String {
    "\(file) is locked by " + (process.map { "process \($0)" } ?? "another process")
  }
}
