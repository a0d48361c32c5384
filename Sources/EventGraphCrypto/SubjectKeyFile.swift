#if canImport(Glibc)
  import Glibc
#endif

/// The file of wrapped subject keys, kept apart from LMDB so that a key can be destroyed by
/// overwriting it in place.
///
/// LMDB is copy-on-write: a value deleted there stays in free pages, in older snapshots and
/// in copies until they happen to be reused. This file is written in place instead, so that
/// ``erase(slot:)`` leaves no copy of the wrapped key in the file. (The storage below can
/// still keep old blocks: a copy-on-write file system, a flash drive's remapping, a backup.
/// What makes the erasure final is that the key-encryption key is needed to unwrap any
/// such copy.)
///
/// Layout: a 64-byte header (the 8-byte magic `EGKEYS01`, the 16-byte store identity, then
/// zeros), then slots of 128 bytes: the subject (UInt64, big-endian), 8 reserved zero bytes,
/// the 72-byte wrapped key (``Seal/wrap(_:with:additionalData:)``), then zeros. A slot of
/// all zeros is empty: never used, or erased. Subject 0 is therefore never a subject.
///
/// Which slot holds which subject is the caller's to keep (in LMDB); the subject in the
/// slot lets that be checked, and lets the file be rebuilt.
public final class SubjectKeyFile: Sendable {
  /// The length of a slot, in bytes.
  public static let slotSize = 128
  /// The length of the header before the first slot, in bytes.
  public static let headerSize = 64
  static let magic = Array("EGKEYS01".utf8)
  static let identitySize = 16
  static let wrappedOffset = 16

  /// The file's path, as given.
  public let path: String
  private let fd: Int32

  /// Opens the slot file at `path`, or creates it.
  ///
  /// - Parameters:
  ///   - storeIdentity: the 16 bytes that name the store; the file's header must hold the
  ///     same, so that one store's keys are never read as another's.
  ///   - create: whether to make the file (mode 0600, with its header, flushed with its
  ///     directory) if it does not exist. An empty file, as a crash during creation
  ///     leaves, is given its header too.
  /// - Throws: ``CryptoError/Code/malformed`` for a header that is not a slot file's (or a
  ///   store identity that is not 16 bytes); ``CryptoError/Code/slotFileForeign`` for the
  ///   slot file of another store; ``CryptoError/Code/slotFileIO`` if the file is missing
  ///   and `create` is false, or cannot be opened, created, read or written.
  public init(path: String, storeIdentity: [UInt8], create: Bool) throws(CryptoError) {
    guard storeIdentity.count == Self.identitySize else {
      throw CryptoError(
        code: .malformed, path: path,
        message:
          "The store identity for the slot file \(path) is \(storeIdentity.count) bytes long; it must be \(Self.identitySize)."
      )
    }
    let flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0)
    let fd: Int32
    switch FileIO.open(path, flags, mode: 0o600) {
    case .success(let opened): fd = opened
    case .failure(let error) where error.code == ENOENT:
      throw CryptoError(code: .slotFileIO, path: path, message: "The slot file \(path) does not exist.")
    case .failure(let error):
      throw CryptoError(code: .slotFileIO, path: path, message: "The slot file \(path) could not be opened: \(error).")
    }
    // Closed on every failure from here on; `deinit` closes it once `self` is made.
    do throws(CryptoError) {
      try Self.checkHeader(fd: fd, path: path, storeIdentity: storeIdentity, create: create)
    } catch {
      close(fd)
      throw error
    }
    self.path = path
    self.fd = fd
  }

  deinit { close(fd) }

  /// Reads the header, or writes it into an empty file when `create` is set.
  private static func checkHeader(fd: Int32, path: String, storeIdentity: [UInt8], create: Bool) throws(CryptoError) {
    var header = [UInt8](repeating: 0, count: headerSize)
    let count: Int
    switch header.withUnsafeMutableBytes({ FileIO.read(fd, into: $0, at: 0) }) {
    case .success(let n): count = n
    case .failure(let error): throw ioError(path, "could not be read", error)
    }
    if count == 0 && create {
      var fresh = magic + storeIdentity
      fresh += [UInt8](repeating: 0, count: headerSize - fresh.count)
      if fchmod(fd, 0o600) != 0 { throw ioError(path, "could not be given mode 0600", Errno(errno)) }
      if let error = fresh.withUnsafeBytes({ FileIO.write(fd, $0, at: 0) }) {
        throw ioError(path, "could not be given its header", error)
      }
      if fsync(fd) != 0 { throw ioError(path, "could not be flushed to disk", Errno(errno)) }
      if let error = FileIO.syncDirectory(of: path) {
        throw ioError(path, "was created but its directory could not be flushed to disk", error)
      }
      return
    }
    guard count == headerSize else {
      throw CryptoError(
        code: .malformed, path: path,
        message: "The slot file \(path) is \(count) bytes long, shorter than its \(headerSize)-byte header.")
    }
    guard Array(header[0..<8]) == magic else {
      throw CryptoError(
        code: .malformed, path: path,
        message: "The file \(path) is not a slot file of subject keys: it does not begin with EGKEYS01.")
    }
    guard Array(header[8..<24]) == storeIdentity else {
      throw CryptoError(
        code: .slotFileForeign, path: path,
        message:
          "The slot file \(path) belongs to store \(hex(header[8..<24])), not to this store (\(hex(storeIdentity)))."
      )
    }
    guard header[24...].allSatisfy({ $0 == 0 }) else {
      throw CryptoError(
        code: .malformed, path: path,
        message: "The slot file \(path) has a damaged header: its reserved bytes 24 to 63 are not all zero.")
    }
  }

  // MARK: - Slots

  /// How many whole slots the file has room for, from its size (a partial slot at the end
  /// does not count).
  public var slotCount: UInt32 {
    get throws(CryptoError) {
      let size = try fileSize()
      return UInt32(clamping: max(0, size - Self.headerSize) / Self.slotSize)
    }
  }

  /// Writes `wrapped` for `subject` into `slot` (`pwrite`, in place; not flushed: call
  /// ``sync()`` before relying on it).
  ///
  /// - Throws: ``CryptoError/Code/malformed`` if `subject` is 0 (the mark of an empty slot)
  ///   or `wrapped` is not 72 bytes; ``CryptoError/Code/slotFileIO`` if the write fails.
  public func write(slot: UInt32, subject: UInt64, wrapped: [UInt8]) throws(CryptoError) {
    guard subject != 0 else {
      throw CryptoError(
        code: .malformed, path: path,
        message: "Slot \(slot) of \(path) cannot be written for subject 0, which marks an empty slot.")
    }
    guard wrapped.count == Seal.wrappedKeyByteCount else {
      throw CryptoError(
        code: .malformed, path: path,
        message:
          "Slot \(slot) of \(path) holds a \(Seal.wrappedKeyByteCount)-byte wrapped key; \(wrapped.count) bytes were given."
      )
    }
    var bytes = [UInt8](repeating: 0, count: Self.slotSize)
    withUnsafeBytes(of: subject.bigEndian) { bytes.replaceSubrange(0..<8, with: $0) }
    bytes.replaceSubrange(Self.wrappedOffset..<(Self.wrappedOffset + wrapped.count), with: wrapped)
    if let error = bytes.withUnsafeBytes({ FileIO.write(fd, $0, at: Self.offset(slot)) }) {
      throw Self.ioError(path, "could not be written at slot \(slot)", error)
    }
  }

  /// The subject and wrapped key in `slot`: nil for an empty slot, or one past the end.
  ///
  /// - Throws: ``CryptoError/Code/malformed``, naming the slot, for a slot that is neither
  ///   empty nor well formed (its reserved bytes not zero, or its subject 0);
  ///   ``CryptoError/Code/slotFileIO`` if the read fails.
  public func read(slot: UInt32) throws(CryptoError) -> (subject: UInt64, wrapped: [UInt8])? {
    var bytes = [UInt8](repeating: 0, count: Self.slotSize)
    let count: Int
    switch bytes.withUnsafeMutableBytes({ FileIO.read(fd, into: $0, at: Self.offset(slot)) }) {
    case .success(let n): count = n
    case .failure(let error): throw Self.ioError(path, "could not be read at slot \(slot)", error)
    }
    guard count == Self.slotSize else { return nil }
    if bytes.allSatisfy({ $0 == 0 }) { return nil }
    let subject = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    let wrappedEnd = Self.wrappedOffset + Seal.wrappedKeyByteCount
    guard subject != 0, bytes[8..<Self.wrappedOffset].allSatisfy({ $0 == 0 }),
      bytes[wrappedEnd...].allSatisfy({ $0 == 0 })
    else {
      let reason = subject == 0 ? "its subject is 0 but it is not empty" : "its reserved bytes are not zero"
      throw CryptoError(
        code: .malformed, path: path, message: "Slot \(slot) of the slot file \(path) is damaged: \(reason).")
    }
    return (subject, Array(bytes[Self.wrappedOffset..<wrappedEnd]))
  }

  /// Destroys the key in `slot`: overwrites the whole slot with zeros in place (`pwrite`)
  /// and flushes the file (`fdatasync`) before returning.
  ///
  /// A slot past the end of the file has nothing to destroy and is left alone; a partial
  /// slot at the end is overwritten whole.
  ///
  /// - Throws: ``CryptoError/Code/slotFileIO`` if the write or the flush fails (the key may
  ///   then still be on disk).
  public func erase(slot: UInt32) throws(CryptoError) {
    let offset = Self.offset(slot)
    guard offset < (try fileSize()) else { return }
    let zeros = [UInt8](repeating: 0, count: Self.slotSize)
    if let error = zeros.withUnsafeBytes({ FileIO.write(fd, $0, at: offset) }) {
      throw Self.ioError(path, "could not be overwritten at slot \(slot)", error)
    }
    try sync()
  }

  /// Destroys every key of the file: overwrites every slot with zeros in place and flushes
  /// the file, keeping its header (how a key rotation leaves the file it replaces).
  ///
  /// - Throws: ``CryptoError/Code/slotFileIO`` if a write or the flush fails.
  public func eraseAll() throws(CryptoError) {
    let end = try fileSize()
    let zeros = [UInt8](repeating: 0, count: 64 * Self.slotSize)
    var offset = Self.headerSize
    while offset < end {
      let n = min(zeros.count, end - offset)
      if let error = zeros.withUnsafeBytes({ FileIO.write(fd, UnsafeRawBufferPointer(rebasing: $0[0..<n]), at: offset) }
      ) {
        throw Self.ioError(path, "could not be overwritten at byte \(offset)", error)
      }
      offset += n
    }
    try sync()
  }

  /// Flushes what was written to disk (`fdatasync`).
  ///
  /// - Throws: ``CryptoError/Code/slotFileIO`` if the flush fails.
  public func sync() throws(CryptoError) {
    while fdatasync(fd) != 0 {
      if errno == EINTR { continue }
      throw Self.ioError(path, "could not be flushed to disk", Errno(errno))
    }
  }

  // MARK: - Helpers

  private static func offset(_ slot: UInt32) -> Int { headerSize + Int(slot) * slotSize }

  private func fileSize() throws(CryptoError) -> Int {
    switch FileIO.status(fd) {
    case .success(let info): return Int(info.st_size)
    case .failure(let error): throw Self.ioError(path, "could not be examined (fstat)", error)
    }
  }

  private static func ioError(_ path: String, _ what: String, _ error: Errno) -> CryptoError {
    CryptoError(code: .slotFileIO, path: path, message: "The slot file \(path) \(what): \(error).")
  }

  private static func hex(_ bytes: some Collection<UInt8>) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
  }
}
