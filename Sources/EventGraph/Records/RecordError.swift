/// Why a record type or a record value does not fit the model: the entity, the property
/// and the Swift type at fault.
///
/// Thrown at a record type's first use with a model (``RecordSchema``), or when a stored
/// value cannot be read as the record's type (a `nil` for a non-optional property).
public struct RecordError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The record type, as Swift names it (`Person`).
  public let record: String
  /// The entity the record type names.
  public let entity: String
  /// The property of the record (and of the entity, when it has one of that name); `nil`
  /// for a fault of the whole type.
  public let property: String?
  /// The Swift type of the record's property, when the fault is about it.
  public let swiftType: String?
  /// What is wrong.
  public let detail: String

  init(record: Any.Type, entity: String, property: String? = nil, swiftType: String? = nil, detail: String) {
    self.init(
      recordName: String(describing: record), entity: entity, property: property, swiftType: swiftType, detail: detail)
  }

  init(recordName: String, entity: String, property: String? = nil, swiftType: String? = nil, detail: String) {
    self.record = recordName
    self.entity = entity
    self.property = property
    self.swiftType = swiftType
    self.detail = detail
  }

  public var description: String {
    var place = "record \(record) (entity \(entity))"
    if let property { place += ", property \(property)" }
    if let swiftType { place += " of Swift type \(swiftType)" }
    return "\(place): \(detail)"
  }
}
