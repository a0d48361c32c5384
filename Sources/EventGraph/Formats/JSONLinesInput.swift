internal import EventGraphText

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// JSON Lines input read a line at a time, from memory, a file or a pipe, so that an
/// import or an append holds one chunk of its input, never the whole file.
///
/// Lines are numbered from 1, blank ones counted (so numbers are the editor's) but not
/// returned. The reader keeps a 64-bit FNV-1a hash of the bytes it has handed out (each
/// line with its line feed), and how many: an import's checkpoint records both, so that a
/// rerun knows whether its input starts with what was imported.
///
/// ```swift
/// let input = try JSONLinesInput(path: "people.jsonl")
/// while let line = try input.next() { print(line.number, line.bytes.count) }
/// ```
public final class JSONLinesInput {
  /// Where the bytes come from.
  private enum Source {
    case memory
    case file(Int32, closing: Bool)
  }

  private let source: Source
  private var buffer: [UInt8]
  /// The unread part of `buffer` is `start..<end`.
  private var start = 0
  private var end = 0
  private var atEOF = false
  /// The number of the next line to read.
  private var nextNumber = 1

  /// The bytes handed out so far (lines with their line feeds, blank lines included).
  public private(set) var consumed: Int = 0
  /// The FNV-1a hash of those bytes.
  public private(set) var hash: UInt64 = JSONLinesInput.hashSeed
  /// The size of a file input, for a progress bar; `nil` for a pipe or standard input.
  public let size: Int?
  /// Where a file input started (its descriptor's offset when given); `nil` for a pipe,
  /// which cannot be read again.
  private let origin: Int?

  /// A place between lines, to come back to with ``rewind(to:)``.
  struct Position {
    var consumed: Int
    var hash: UInt64
    var nextNumber: Int
  }

  /// Where the input stands: after the last line handed out (and any blank lines read with it).
  var position: Position { Position(consumed: consumed, hash: hash, nextNumber: nextNumber) }

  /// Whether ``rewind(to:)`` can go back: memory and regular files can, pipes cannot.
  var canRewind: Bool { origin != nil }

  /// The FNV-1a 64 offset basis: the hash of no bytes.
  public static let hashSeed: UInt64 = 0xcbf2_9ce4_8422_2325

  /// How much is read from a file at a time.
  static let chunk = 1 << 20

  /// Lines of bytes already in memory.
  public init(bytes: [UInt8]) {
    source = .memory
    buffer = bytes
    end = bytes.count
    atEOF = true
    size = bytes.count
    origin = 0
  }

  /// Lines read from an open file descriptor (standard input is 0), which the reader does
  /// not close.
  public init(fileDescriptor: Int32) {
    source = .file(fileDescriptor, closing: false)
    buffer = [UInt8](repeating: 0, count: Self.chunk)
    size = Self.regularFileSize(fileDescriptor)
    origin = size == nil ? nil : Self.offset(fileDescriptor)
  }

  /// Lines read from the file at `path`.
  ///
  /// - Throws: ``FormatError`` (line 0) when the file cannot be opened.
  public init(path: String) throws(FormatError) {
    let fd: Int32
    do throws(FileReadError) {
      (fd, _) = try FileReading.open(atPath: path)
    } catch {
      throw FormatError(line: 0, message: error.reason)
    }
    source = .file(fd, closing: true)
    buffer = [UInt8](repeating: 0, count: Self.chunk)
    size = Self.regularFileSize(fd)
    origin = size == nil ? nil : Self.offset(fd)
  }

  deinit {
    if case .file(let fd, closing: true) = source { _ = close(fd) }
  }

  private static func regularFileSize(_ fd: Int32) -> Int? {
    var st = stat()
    guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
    return Int(st.st_size)
  }

  private static func isFIFO(_ fd: Int32) -> Bool {
    var st = stat()
    return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO
  }

  private static func offset(_ fd: Int32) -> Int? {
    let o = lseek(fd, 0, SEEK_CUR)
    return o < 0 ? nil : Int(o)
  }

  /// `seed` carried on over `bytes` (FNV-1a, 64 bits).
  static func hash(_ seed: UInt64, _ bytes: some Sequence<UInt8>) -> UInt64 {
    var h = seed
    for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
    return h
  }

  /// Goes back to `position`, to read the same lines again; `false` when the input cannot.
  func rewind(to p: Position) -> Bool {
    guard let origin else { return false }
    switch source {
    case .memory:
      start = p.consumed
    case .file(let fd, _):
      guard lseek(fd, off_t(origin + p.consumed), SEEK_SET) >= 0 else { return false }
      (start, end, atEOF) = (0, 0, false)
    }
    (consumed, hash, nextNumber) = (p.consumed, p.hash, p.nextNumber)
    return true
  }

  /// The next line that is not blank, without its line feed; `nil` at the end.
  ///
  /// - Throws: ``FormatError`` when the input cannot be read.
  public func next() throws(FormatError) -> (number: Int, bytes: ArraySlice<UInt8>)? {
    while true {
      guard let (lineEnd, next) = try nextLineBounds() else { return nil }
      let number = nextNumber
      nextNumber += 1
      let line = buffer[start..<lineEnd]
      absorb(start..<next)
      start = next
      if !Self.isBlank(line) { return (number, line) }
    }
  }

  /// The bounds of the next line in `buffer` (its end without the line feed, and where the
  /// following line starts), reading more input as needed; `nil` at the end of input.
  private func nextLineBounds() throws(FormatError) -> (Int, Int)? {
    // No line feed lies in start..<scanned.
    var scanned = start
    while true {
      if let lf = Self.firstLineFeed(in: buffer, from: scanned, to: end) { return (lf, lf + 1) }
      if atEOF { return start < end ? (end, end) : nil }
      let before = start
      scanned = end
      try fill()
      scanned -= before - start  // `fill` moved the unread bytes to the front
    }
  }

  /// Reads more input after the unread bytes, first moving them to the front (and growing
  /// the buffer when one line fills it).
  private func fill() throws(FormatError) {
    guard case .file(let fd, _) = source else {
      atEOF = true
      return
    }
    if start > 0 {
      buffer.withUnsafeMutableBytes { b in
        guard let base = b.baseAddress else { return }
        // SAFETY: both ranges lie inside the buffer; memmove allows them to overlap.
        memmove(base, base + start, end - start)
      }
      end -= start
      start = 0
    }
    if end == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
    while true {
      let n = buffer.withUnsafeMutableBytes { b -> Int in
        guard let base = b.baseAddress else { return 0 }
        // SAFETY: the read writes at most `count - end` bytes after `end`, inside the buffer.
        return read(fd, base + end, b.count - end)
      }
      if n < 0 && errno == EINTR { continue }
      guard n >= 0 else {
        throw FormatError(line: nextNumber, message: "cannot be read (\(String(cString: strerror(errno))))")
      }
      if n == 0 {
        atEOF = true
        // A FIFO that gave nothing at all had no writer: an empty FIFO is a mistake.
        if consumed == 0 && end == 0 && Self.isFIFO(fd) {
          throw FormatError(line: 0, message: FileReading.emptyFIFO)
        }
      }
      end += n
      return
    }
  }

  /// Adds the bytes of `range` to the hash and the count.
  private func absorb(_ range: Range<Int>) {
    hash = buffer.withUnsafeBufferPointer { b in Self.hash(hash, b[range]) }
    consumed += range.count
  }

  private static func firstLineFeed(in buffer: [UInt8], from: Int, to: Int) -> Int? {
    guard from < to else { return nil }
    return buffer.withUnsafeBytes { b -> Int? in
      guard let base = b.baseAddress else { return nil }
      // SAFETY: memchr reads `to - from` bytes from `from`, inside the buffer.
      guard let p = memchr(base + from, 10, to - from) else { return nil }
      return base.distance(to: UnsafeRawPointer(p))
    }
  }

  private static func isBlank(_ line: ArraySlice<UInt8>) -> Bool {
    !line.contains { $0 != 32 && $0 != 9 && $0 != 13 }
  }
}
