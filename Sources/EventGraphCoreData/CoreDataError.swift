/// A Core Data file that cannot be imported: the file, and the element, key, table or row
/// at fault.
public struct CoreDataError: Error, Sendable, Equatable, CustomStringConvertible {
  public let file: String
  public let message: String

  public init(file: String, _ message: String) {
    self.file = file
    self.message = message
  }

  public var description: String { "\(file): \(message)" }
}
