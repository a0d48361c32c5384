import EventGraph

/// A Core Data file that cannot be imported: the file, and the element, key, table or row
/// at fault.
public struct CoreDataError: RemediedError, Sendable, Equatable {
  public let file: String
  public let message: String
  /// What a user can do, if anything.
  public let remedy: Remedy?

  public init(file: String, _ message: String, remedy: Remedy? = nil) {
    self.file = file
    self.message = message
    self.remedy = remedy
  }

  public var problem: String { "\(file): \(message)" }
}

extension CoreDataError {
  /// A refusal of a strict import: what would have been converted or left out.
  static func strict(file: String, notes: [String], first: String) -> CoreDataError {
    let more = notes.count > 1 ? " (and \(notes.count - 1) more)" : ""
    return CoreDataError(
      file: file, "strict: the import would convert or leave out what it reads: \(first)\(more); nothing written")
  }
}
