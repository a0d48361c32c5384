import Dispatch
import EventGraphLocking

// An import's lines are read in order on the importing thread (the input's count and hash
// move with each one) and parsed a chunk ahead on another: the JSON and the model's checks
// of each line are a third of an import's work, and they need nothing the commits make.

/// A line of an import's input as read, with where the input stood after it, and its
/// checked contents once parsed.
struct ImportLine: Sendable {
  var number: Int
  /// The line's bytes; dropped once it is parsed, but for the first line (which names
  /// the import's checkpoint).
  var bytes: [UInt8]
  var consumed: Int
  var hash: UInt64
  /// Where the input stood before it.
  var before: JSONLinesInput.Position
  /// The line checked against the model, or why it is refused.
  var parsed: Result<ImportItem, FormatError>?
}

/// Lines of an import's input handed out in order, each parsed before it is asked for:
/// while the caller works through one chunk of lines, the next is parsed on another thread.
///
/// The input is read only on the caller's thread; a read error is raised after the lines
/// read before it, where the caller would have met it reading line by line.
final class ImportReadAhead {
  /// Lines per chunk: enough that handing a chunk over costs little beside parsing it,
  /// few enough that a chunk held twice weighs nothing (a few hundred kilobytes).
  static let chunkLines = 512

  let input: JSONLinesInput
  let model: Model
  /// The chunk being handed out, and the next one being parsed.
  private var current: [ImportLine] = []
  private var index = 0
  private var currentError: FormatError?
  private var next: ParsedChunk?
  private var ended = false

  init(input: JSONLinesInput, model: Model) {
    self.input = input
    self.model = model
  }

  /// The next line, parsed; `nil` at the end of the input.
  ///
  /// - Throws: ``FormatError`` when the input cannot be read at this line.
  func line() throws(FormatError) -> ImportLine? {
    while index == current.count {
      if let currentError {
        self.currentError = nil
        throw currentError
      }
      if next == nil { next = startChunk() }
      guard let chunk = next else { return nil }
      (current, currentError) = (chunk.lines(), chunk.readError)
      index = 0
      next = startChunk()
    }
    defer { index += 1 }
    return current[index]
  }

  /// Forgets the lines read ahead: the input was moved (``JSONLinesInput/rewind(to:)``).
  func reset() {
    (current, index, currentError, next, ended) = ([], 0, nil, nil, false)
  }

  /// Reads the next chunk's lines and starts parsing them on another thread; `nil` when the
  /// input has no more lines.
  private func startChunk() -> ParsedChunk? {
    guard !ended else { return nil }
    var lines: [ImportLine] = []
    lines.reserveCapacity(Self.chunkLines)
    var error: FormatError?
    while lines.count < Self.chunkLines {
      let before = input.position
      do {
        guard let (number, bytes) = try input.next() else {
          ended = true
          break
        }
        lines.append(
          ImportLine(
            number: number, bytes: Array(bytes), consumed: input.consumed, hash: input.hash, before: before,
            parsed: nil))
      } catch let e {
        (error, ended) = (e, true)
        break
      }
    }
    guard !lines.isEmpty || error != nil else { return nil }
    let chunk = ParsedChunk(lines: lines, readError: error)
    chunk.start(model: model)
    return chunk
  }
}

/// A chunk of lines parsed on another thread.
final class ParsedChunk: Sendable {
  let readError: FormatError?
  private let raw: [ImportLine]
  private let parsed = Locked<[ImportLine]?>(nil)
  private let done = DispatchSemaphore(value: 0)

  init(lines: [ImportLine], readError: FormatError?) {
    raw = lines
    self.readError = readError
  }

  /// Parses the lines on another thread.
  func start(model: Model) {
    DispatchQueue.global().async { [self] in
      var lines = raw
      for i in lines.indices {
        let (number, bytes) = (lines[i].number, lines[i].bytes[...])
        lines[i].parsed = Result { () throws(FormatError) in try ImportItem(line: number, bytes: bytes, model: model) }
        if lines[i].before.consumed > 0 { lines[i].bytes = [] }
      }
      parsed.withLock { $0 = lines }
      done.signal()
    }
  }

  /// The lines, parsed: waits for the other thread to finish them.
  func lines() -> [ImportLine] {
    done.wait()
    return parsed.withLock { $0 ?? [] }
  }
}

extension EventStore {
  /// Reads and checks every line of `input` as an import does, writing nothing.
  ///
  /// The floor the parse sets under an import's rate, on one thread (the benchmarks
  /// measure it beside the import). Returns the number of lines.
  ///
  /// - Throws: ``FormatError`` for the first bad line.
  package static func checkImportLines(from input: JSONLinesInput, model: Model) throws(FormatError) -> Int {
    var count = 0
    while let (number, bytes) = try input.next() {
      _ = try ImportItem(line: number, bytes: bytes, model: model)
      count += 1
    }
    return count
  }
}
