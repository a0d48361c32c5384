internal import EventGraphText
import Foundation

/// Where a command reads and writes: the process's streams, or buffers in tests.
public final class ToolIO: @unchecked Sendable {
  // SAFETY (@unchecked Sendable): a command runs on one thread; the closures are only
  // called from it.
  let writeOut: (String) -> Void
  let writeErr: (String) -> Void
  let readInput: () -> [UInt8]
  /// Whether standard error is a terminal (progress bars are shown only then).
  public let isTerminal: Bool
  /// Whether `-` is the process's standard input, which a command may then stream
  /// instead of reading it whole through `input`.
  let readsStandardInput: Bool

  public init(
    out: @escaping (String) -> Void, err: @escaping (String) -> Void, input: @escaping () -> [UInt8] = { [] },
    isTerminal: Bool = false
  ) {
    self.writeOut = out
    self.writeErr = err
    self.readInput = input
    self.isTerminal = isTerminal
    self.readsStandardInput = false
  }

  private init(standardIsTerminal: Bool) {
    writeOut = { FileHandle.standardOutput.write(Data($0.utf8)) }
    writeErr = { FileHandle.standardError.write(Data($0.utf8)) }
    readInput = { [UInt8](FileHandle.standardInput.readDataToEndOfFile()) }
    isTerminal = standardIsTerminal
    readsStandardInput = true
  }

  /// The process's standard streams.
  public static func standard() -> ToolIO {
    ToolIO(standardIsTerminal: isatty(2) == 1)
  }

  /// Prints a line to standard output.
  public func print(_ line: String) { writeOut(line + "\n") }

  /// Prints a line to standard error.
  public func printError(_ line: String) { writeErr(line + "\n") }

  /// Reads a file (also a pipe or a device such as /dev/stdin), or standard input for `-`.
  ///
  /// - Throws: ``ToolError/failed(_:)`` naming the path and why it cannot be read: missing,
  ///   not permitted, a directory, a FIFO nothing was written to.
  public func read(_ path: String) throws -> [UInt8] {
    if path == "-" { return readInput() }
    do {
      return try FileReading.contents(atPath: path)
    } catch {
      throw ToolError.failed(error.description)
    }
  }

  /// A progress bar on a terminal; nothing otherwise.
  public func progress(_ label: String, total: Int?) -> Progress { Progress(io: self, label: label, total: total) }
}

/// A progress bar drawn on standard error, only when it is a terminal.
public final class Progress {
  let io: ToolIO
  let label: String
  let total: Int?
  private var last = Date.distantPast

  init(io: ToolIO, label: String, total: Int?) {
    self.io = io
    self.label = label
    self.total = total
  }

  /// Shows `done` (at most ten times a second).
  public func update(_ done: Int) {
    guard io.isTerminal, Date().timeIntervalSince(last) > 0.1 else { return }
    last = Date()
    if let total, total > 0 {
      let width = 30
      let filled = min(width, done * width / total)
      io.writeErr(
        "\r\(label) [\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] \(done)/\(total)"
      )
    } else {
      io.writeErr("\r\(label) \(done)")
    }
  }

  /// Clears the bar.
  public func finish() {
    if io.isTerminal { io.writeErr("\r\u{1B}[K") }
  }
}

/// A command's failure: exit status 1 (the operation failed) or 2 (bad command line).
public enum ToolError: Error, CustomStringConvertible {
  case failed(String)
  case usage(String)

  public var description: String {
    switch self {
    case .failed(let m), .usage(let m): m
    }
  }
}
