import { Type } from 'typebox';
import { Email, FullName, Password } from '../users/schema.js';

export const RegisterBody = Type.Object(
  { email: Email, password: Password, full_name: FullName },
  { additionalProperties: false },
);

export const LoginBody = Type.Object(
  { email: Email, password: Type.String({ minLength: 1, maxLength: 128 }) },
  { additionalProperties: false },
);

export const RefreshBody = Type.Object(
  { refresh_token: Type.String({ minLength: 1, maxLength: 4096 }) },
  { additionalProperties: false },
);

export const TokenPair = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.Literal('bearer'),
  expires_in: Type.Integer({ description: 'Lifetime of the access token in seconds' }),
});
