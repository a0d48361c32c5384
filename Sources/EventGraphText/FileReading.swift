import Foundation

/// Why a file someone named cannot be read: the path, and the reason in words.
public struct FileReadError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The path as it was given.
  public let path: String
  /// Why it cannot be read: `is a directory, not a file`, `permission denied`.
  public let reason: String

  public init(path: String, reason: String) {
    self.path = path
    self.reason = reason
  }

  public var description: String { "\(path): \(reason)" }
}

/// Reading a file a user names (a model, a mapping, a JSON Lines file) without trusting it
/// to be one.
///
/// Foundation's `FileHandle.readDataToEndOfFile()` stops the process (a `try!` inside it)
/// when the path is a directory, and `FileManager.contents(atPath:)` says only "nil" and
/// waits forever on a FIFO nobody writes to. Every reader of a user's file goes through
/// here instead, so that each of those is an error naming the path and saying why.
public enum FileReading {
  /// The bytes of the file at `path`: a regular file, a pipe (`/dev/stdin`, a FIFO with a
  /// writer) or a character device.
  ///
  /// - Throws: ``FileReadError`` naming the path when it does not exist, may not be read,
  ///   is a directory or a socket, is a FIFO nothing was written to, or a read fails.
  public static func contents(atPath path: String) throws(FileReadError) -> [UInt8] {
    let (fd, info) = try open(atPath: path)
    defer { close(fd) }
    let kind = info.st_mode & S_IFMT
    var bytes: [UInt8] = []
    if kind == S_IFREG { bytes.reserveCapacity(Int(info.st_size)) }
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let n = read(fd, &buffer, buffer.count)
      if n > 0 {
        bytes.append(contentsOf: buffer[0..<n])
      } else if n == 0 {
        break
      } else if errno != EINTR {
        throw FileReadError(path: path, reason: reason(errno))
      }
    }
    if kind == S_IFIFO && bytes.isEmpty {
      throw FileReadError(path: path, reason: emptyFIFO)
    }
    return bytes
  }

  /// Opens the file at `path` for reading in blocking mode, refusing what is not a file,
  /// without waiting for a writer: a FIFO nothing writes to then reads as empty at once.
  ///
  /// - Returns: the descriptor, which the caller closes, and the file's status.
  /// - Throws: ``FileReadError`` naming the path when it does not exist, may not be read,
  ///   or is a directory or a socket.
  public static func open(atPath path: String) throws(FileReadError) -> (Int32, stat) {
    // Non-blocking, so that opening a FIFO without a writer does not wait for one.
    let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { throw FileReadError(path: path, reason: reason(errno)) }
    var info = stat()
    var refusal: String?
    if fstat(fd, &info) != 0 {
      refusal = reason(errno)
    } else if info.st_mode & S_IFMT == S_IFDIR {
      refusal = "is a directory, not a file"
    } else if info.st_mode & S_IFMT == S_IFSOCK {
      refusal = "is a socket, not a file"
    } else {
      // Blocking reads from here on: a pipe with a writer is read until the writer closes it.
      let flags = fcntl(fd, F_GETFL)
      if flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 { refusal = reason(errno) }
    }
    if let refusal {
      close(fd)
      throw FileReadError(path: path, reason: refusal)
    }
    return (fd, info)
  }

  /// The words for a FIFO that gave no bytes.
  public static let emptyFIFO = "is a FIFO (named pipe) that nothing was written to"

  /// An `errno` in the words a user reads: `no such file or directory`, `permission denied`.
  public static func reason(_ code: Int32) -> String {
    switch code {
    case ENOENT: "no such file or directory"
    case EACCES, EPERM: "permission denied"
    case ENOTDIR: "a part of the path is not a directory"
    case EISDIR: "is a directory, not a file"
    case ELOOP: "too many symbolic links"
    case ENAMETOOLONG: "the name is too long"
    default: String(cString: strerror(code)).lowercased()
    }
  }
}
