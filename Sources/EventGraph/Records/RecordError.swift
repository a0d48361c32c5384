/// Why a record type or a record value does not fit the model: the entity, the property
/// and the Swift type at fault.
///
/// Thrown at a record type's first use with a model, when its properties are checked
/// against the entity, or when a stored value cannot be read as the record's type (a `nil`
/// for a non-optional property).
public struct RecordError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of fault an error is; compare with the constants (`e.code == .missingValue`).
  public typealias Code = ErrorCode<RecordError>

  /// What kind of fault this is.
  public let code: Code
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

  init(
    _ code: Code, record: Any.Type, entity: String, property: String? = nil, swiftType: String? = nil,
    detail: String
  ) {
    self.init(
      code, recordName: String(describing: record), entity: entity, property: property, swiftType: swiftType,
      detail: detail)
  }

  init(
    _ code: Code, recordName: String, entity: String, property: String? = nil, swiftType: String? = nil,
    detail: String
  ) {
    self.code = code
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

// MARK: - The codes

extension ErrorCode where Domain == RecordError {
  /// The record type does not fit the model, found at the type's first use with a model.
  ///
  /// No such entity or property, another type, an optional where the model has none (or
  /// the other way), a relationship to another entity.
  public static var doesNotFitModel: Self { Self("doesNotFitModel") }
  /// A property of a Swift type no record holds, a nested container, or a type not coded
  /// through a keyed container (the synthesized `Codable` conformance).
  public static var unsupportedType: Self { Self("unsupportedType") }
  /// The record type's decoding failed in the check at its first use, with an error of its own.
  public static var checkFailed: Self { Self("checkFailed") }
  /// A property read or written that the record type was not checked with (a hand-written
  /// `init(from:)` or `encode(to:)` that differs from the checked one).
  public static var notInSchema: Self { Self("notInSchema") }
  /// No value for a property that is not an optional: an unset attribute, an empty to-one.
  public static var missingValue: Self { Self("missingValue") }
  /// A stored value, or a value given, that does not fit the property's Swift type.
  public static var valueDoesNotFit: Self { Self("valueDoesNotFit") }
  /// A personal value read from a store opened without its key (Docs/privacy.md).
  public static var keyRequired: Self { Self("keyRequired") }
  /// A personal value erased with its subject, read into a property that is not an optional.
  public static var erasedValue: Self { Self("erasedValue") }
  /// A name that is no Swift identifier, for which no record type can be generated.
  public static var invalidName: Self { Self("invalidName") }
}
