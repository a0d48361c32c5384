import Foundation

/// Who else has an environment open, and a lock that keeps every process out of it while
/// its data file is replaced.
///
/// Every process that opens an LMDB environment holds a POSIX read lock on the first byte
/// of its `lock.mdb` for as long as it has it open (the first opener holds a write lock
/// while it sets up the lock table, then shares it). So a write lock on that byte can be
/// had only when no process has the environment open, and while it is held a process that
/// tries to open the environment waits in `mdb_env_open`.
///
/// The locks taken here are open-file-description locks (Linux's `F_OFD_SETLK`): they
/// conflict with LMDB's POSIX locks, this process's own included, and belong to their file
/// description, not to the process. Closing the description releases them; but closing
/// any descriptor of `lock.mdb` also drops this process's POSIX locks on it, so an
/// environment must not be open in this process while one of these is used (LMDB's own
/// rule: never open one environment twice in a process).
public final class EnvironmentLock {
  // Linux's open-file-description lock commands (fcntl.h defines them only with _GNU_SOURCE).
  private static let getLock: Int32 = 36
  private static let setLock: Int32 = 37

  private let descriptor: Int32
  public let lockFile: String

  /// Takes the write lock on the environment in `directory`, without waiting.
  ///
  /// - Throws: ``EnvironmentInUse`` when a process has the environment open (naming it
  ///   when the kernel says which), ``LMDBError`` when the lock file cannot be opened.
  public init(directory: String) throws {
    lockFile = directory + "/lock.mdb"
    let fd = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw LMDBError(code: errno, operation: "open(\(lockFile))") }
    var request = Self.firstByte(F_WRLCK)
    if Self.fcntlLock(fd, Self.setLock, &request) != 0 {
      let reason = errno
      var probe = Self.firstByte(F_WRLCK)
      let holder = Self.fcntlLock(fd, Self.getLock, &probe) == 0 && probe.l_type != F_UNLCK ? probe.l_pid : nil
      close(fd)
      guard reason == EAGAIN || reason == EACCES else {
        throw LMDBError(code: reason, operation: "fcntl(\(lockFile), F_OFD_SETLK)")
      }
      throw EnvironmentInUse(directory: directory, process: holder.flatMap { $0 > 0 ? $0 : nil })
    }
    descriptor = fd
  }

  deinit { close(descriptor) }

  /// Empties the lock file while no process has the environment open: a process that was
  /// waiting to open it then fails to map an empty lock table and reports it, instead of
  /// trusting a table that describes the replaced data file; the next opener, alone, sets
  /// up a fresh one.
  public func resetLockTable() throws(LMDBError) {
    guard ftruncate(descriptor, 0) == 0 else { throw LMDBError(code: errno, operation: "ftruncate(\(lockFile))") }
  }

  /// Another process that has the environment in `directory` open, `nil` when none does.
  ///
  /// Must not be asked while this process has it open (see the type's notes).
  public static func otherUser(directory: String) throws -> EnvironmentInUse? {
    do {
      _ = try EnvironmentLock(directory: directory)
      return nil
    } catch let e as EnvironmentInUse {
      return e
    }
  }

  private static func firstByte(_ type: Int32) -> flock {
    var f = flock()
    f.l_type = Int16(type)
    f.l_whence = Int16(SEEK_SET)
    f.l_start = 0
    f.l_len = 1
    return f
  }

  private static func fcntlLock(_ fd: Int32, _ command: Int32, _ request: inout flock) -> Int32 {
    // SAFETY: the pointer is to a local flock that outlives the call, which only reads and
    // writes that struct.
    withUnsafeMutablePointer(to: &request) { fcntl(fd, command, $0) }
  }
}

/// A process has the environment open (``EnvironmentLock``).
public struct EnvironmentInUse: Error, Sendable, Hashable, CustomStringConvertible {
  public let directory: String
  /// The process holding it, when the kernel names one (it does for POSIX locks).
  public let process: Int32?

  public var description: String {
    let who = process.map { "process \($0)" } ?? "another process"
    return "\(directory) is open in \(who)"
  }
}
