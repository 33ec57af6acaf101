import { AppError } from '../../errors.js';

/**
 * Audio the service cannot use: not a WAV file, a header that lies about its size, a format it
 * does not decode, a rate or length outside its limits. A client's upload answers 422
 * (VALIDATION_ERROR) through the app's one error handler; a provider that receives such audio
 * from its engine wraps it in a ProviderError instead.
 */
export class AudioFormatError extends AppError {
  constructor(message: string) {
    super('VALIDATION_ERROR', 'Audio could not be decoded', [{ field: 'audio', message }]);
    this.name = 'AudioFormatError';
  }

  /** The reason without the generic envelope, for logs and wrapped errors. */
  get reason(): string {
    const details = this.details as { message: string }[];
    return details[0]?.message ?? this.message;
  }
}
