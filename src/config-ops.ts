import { Type, type Static } from 'typebox';

/**
 * The operator server's settings (spec 4.11, issue 13): a second HTTP listener for operators'
 * tools, on its own port and, unless configured otherwise, reachable from this machine only.
 */
export const OpsEnv = {
  OPS_PORT: Type.Union([Type.Integer({ minimum: 0, maximum: 65_535 }), Type.Literal('off')], {
    default: 8001,
    description: 'a port number (0 to 65535; 0 picks a free one) or off',
  }),
  OPS_HOST: Type.String({ minLength: 1, maxLength: 255, default: '127.0.0.1' }),
};

type OpsEnvValues = Static<ReturnType<typeof Type.Object<typeof OpsEnv>>>;

export interface OpsSettings {
  ops: {
    /** Null: no operator server (`OPS_PORT=off`). */
    port: number | null;
    host: string;
  };
}

export function opsConfig(env: OpsEnvValues): OpsSettings {
  return { ops: { port: env.OPS_PORT === 'off' ? null : env.OPS_PORT, host: env.OPS_HOST } };
}
