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
