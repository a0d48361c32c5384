import EventGraph

extension ToolIO {
  /// JSON Lines input for a command, read a chunk at a time: the file at `path`, or standard
  /// input for `-` (streamed when it is the process's own).
  func lines(_ path: String) throws -> JSONLinesInput {
    if path == "-" {
      return readsStandardInput ? JSONLinesInput(fileDescriptor: 0) : JSONLinesInput(bytes: readInput())
    }
    do {
      return try JSONLinesInput(path: path)
    } catch {
      throw ToolError.failed("\(path): \(error.message)")
    }
  }
}

/// The name of an input in messages: the file, or `standard input` for `-`.
func inputName(_ path: String) -> String { path == "-" ? "standard input" : path }
