#if canImport(Glibc)
  import Glibc
#endif

/// The key-encryption key's file: exactly 32 random bytes, a regular file of mode 0600
/// (no permission for group or others).
///
/// The key in this file wraps every subject's key (``SubjectKeyFile``); keep it apart from
/// the store and its backups, since whoever holds both can read all personal data.
///
/// ```swift
/// let kek = try KeyFile.generate(at: "/etc/eventgraph/store.key")   // once
/// let same = try KeyFile.load(from: "/etc/eventgraph/store.key")    // at every open
/// ```
public enum KeyFile {
  /// Writes a new random key to `path` and returns it.
  ///
  /// The file is created with `O_CREAT | O_EXCL` and mode 0600 (whatever the umask), and it
  /// and its directory are flushed (`fsync`) before this returns, so that the key outlives a
  /// crash. An existing file is never overwritten; a file left half written by a failure
  /// here is removed.
  ///
  /// - Throws: ``CryptoError/Code/keyFileExists`` if something is already at `path`;
  ///   ``CryptoError/Code/keyFileIO`` if the file cannot be created, written or flushed.
  public static func generate(at path: String) throws(CryptoError) -> SymmetricKey {
    try Sodium.ready()
    let fd: Int32
    switch FileIO.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600) {
    case .success(let opened): fd = opened
    case .failure(let error) where error.code == EEXIST:
      throw CryptoError(
        code: .keyFileExists, path: path,
        message:
          "A key file already exists at \(path); it is never overwritten (remove it first if it is truly unused).")
    case .failure(let error):
      throw ioError(path, "could not be created", error)
    }
    let key = SymmetricKey.random()
    var failure: (what: String, error: Errno)?
    if fchmod(fd, 0o600) != 0 {
      failure = ("could not be given mode 0600", Errno(errno))
    } else if let error = key.withBytes({ FileIO.write(fd, $0, at: 0) }) {
      failure = ("could not be written", error)
    } else if fsync(fd) != 0 {
      failure = ("could not be flushed to disk", Errno(errno))
    }
    close(fd)
    if failure == nil, let error = FileIO.syncDirectory(of: path) {
      failure = ("was written but its directory could not be flushed to disk", error)
    }
    if let failure {
      unlink(path)
      throw ioError(path, failure.what, failure.error)
    }
    return key
  }

  /// Reads the key in the file at `path`, after checking that it is one.
  ///
  /// A symbolic link is followed (secret stores often mount keys so); the checks apply to
  /// the file it names.
  ///
  /// - Throws: ``CryptoError/Code/keyFileMissing`` if nothing is at `path`;
  ///   ``CryptoError/Code/keyFileNotRegular`` for a directory, device, pipe or socket;
  ///   ``CryptoError/Code/keyFileSize`` unless the file is exactly 32 bytes;
  ///   ``CryptoError/Code/keyFileMode`` if its group or others have any permission;
  ///   ``CryptoError/Code/keyFileIO`` if it cannot be opened or read.
  public static func load(from path: String) throws(CryptoError) -> SymmetricKey {
    try Sodium.ready()
    // O_NONBLOCK so that a FIFO put where the key should be is refused rather than waited on.
    let fd: Int32
    switch FileIO.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) {
    case .success(let opened): fd = opened
    case .failure(let error) where error.code == ENOENT:
      throw CryptoError(code: .keyFileMissing, path: path, message: "The key file \(path) does not exist.")
    case .failure(let error):
      throw ioError(path, "could not be opened", error)
    }
    defer { close(fd) }
    let info: stat
    switch FileIO.status(fd) {
    case .success(let status): info = status
    case .failure(let error): throw ioError(path, "could not be examined (fstat)", error)
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw CryptoError(
        code: .keyFileNotRegular, path: path,
        message: "The key file \(path) is \(kind(info.st_mode)), not a regular file.")
    }
    guard info.st_size == SymmetricKey.byteCount else {
      throw CryptoError(
        code: .keyFileSize, path: path,
        message:
          "The key file \(path) is \(info.st_size) bytes long; a key file holds exactly \(SymmetricKey.byteCount) bytes."
      )
    }
    guard info.st_mode & 0o077 == 0 else {
      throw CryptoError(
        code: .keyFileMode, path: path,
        message:
          "The key file \(path) has mode \(FileIO.octal(info.st_mode)), which lets its group or others at it; run `chmod 600 \(path)`."
      )
    }
    return try SymmetricKey { (storage: UnsafeMutableRawPointer) throws(CryptoError) in
      // SAFETY: `storage` is the new key's own `byteCount` bytes, and the read is limited
      // to them.
      let buffer = UnsafeMutableRawBufferPointer(start: storage, count: SymmetricKey.byteCount)
      switch FileIO.read(fd, into: buffer, at: 0) {
      case .success(SymmetricKey.byteCount): return
      case .success(let count):
        throw CryptoError(
          code: .keyFileSize, path: path,
          message:
            "The key file \(path) gave \(count) bytes when read; a key file holds exactly \(SymmetricKey.byteCount).")
      case .failure(let error):
        throw ioError(path, "could not be read", error)
      }
    }
  }

  private static func ioError(_ path: String, _ what: String, _ error: Errno) -> CryptoError {
    CryptoError(code: .keyFileIO, path: path, message: "The key file \(path) \(what): \(error).")
  }

  private static func kind(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFDIR: "a directory"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    case S_IFIFO: "a pipe (FIFO)"
    case S_IFSOCK: "a socket"
    default: "not a regular file"
    }
  }
}
